package clientgo

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// impl is one implementation of client-go's SharedIndexInformer under test.
type impl struct {
	name string
	// build makes an informer over src, as client-go's
	// NewSharedIndexInformer(lw, &ConfigMap{}, resync, indexers) would.
	build func(t *testing.T, src *fake.Source[*corev1.ConfigMap], resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer
}

// impls are client-go's own informer, the reference, and the adapter.
var impls = []impl{
	{"client-go", func(_ *testing.T, src *fake.Source[*corev1.ConfigMap], resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		return toolscache.NewSharedIndexInformer(clientGoSource{src}, &corev1.ConfigMap{}, resync, indexers)
	}},
	{"kinformer", func(t *testing.T, src *fake.Source[*corev1.ConfigMap], resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		inf, err := New(Options[*corev1.ConfigMap]{Informer: informer.Options[*corev1.ConfigMap]{
			Source:       src,
			ResyncPeriod: resync,
			Indexers:     fromClientGoIndexers[*corev1.ConfigMap](indexers),
		}})
		if err != nil {
			t.Fatal(err)
		}
		return inf
	}},
}

// conform runs body once per implementation, each in its own synctest
// bubble with a fresh source, so that every difference shows as a failing
// subtest.
func conform(t *testing.T, body func(t *testing.T, e *env)) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := &env{t: t, impl: im}
				src, err := fake.New(fake.Options[*corev1.ConfigMap]{OnList: e.onList, OnWatch: e.onList})
				if err != nil {
					t.Fatal(err)
				}
				e.src = src
				defer e.stop()
				body(t, e)
			})
		})
	}
}

// env is one implementation's informer over a fake source, in a bubble.
type env struct {
	t      *testing.T
	impl   impl
	src    *fake.Source[*corev1.ConfigMap]
	inf    toolscache.SharedIndexInformer
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	listErr error // returned by every List and Watch while set
}

// failLists makes every List and Watch call fail with err, until called
// with nil.
func (e *env) failLists(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.listErr = err
}

func (e *env) onList(listwatch.Options) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.listErr
}

// build makes the informer; it does not run it.
func (e *env) build(resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	e.inf = e.impl.build(e.t, e.src, resync, indexers)
	return e.inf
}

// run starts the informer on a goroutine; stop ends it.
func (e *env) run() {
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.done = cancel, make(chan struct{})
	go func() {
		defer close(e.done)
		e.inf.RunWithContext(ctx)
	}()
}

// stop cancels the informer's Run and waits for it to return.
func (e *env) stop() {
	if e.cancel != nil {
		e.cancel()
		<-e.done
		e.cancel = nil
	}
}

// settle lets bubble time pass (back-offs, relists) and returns once every
// goroutine is idle: all notifications are then delivered.
func (e *env) settle() {
	time.Sleep(5 * time.Second)
	synctest.Wait()
}

func (e *env) create(name string) {
	e.t.Helper()
	if _, err := e.src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": name}}}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) update(name string) {
	e.t.Helper()
	obj, ok := e.src.Get("ns", name)
	if !ok {
		e.t.Fatalf("no object %s", name)
	}
	obj.Data = map[string]string{"n": fmt.Sprint(len(obj.Data["n"]) + 1)}
	if _, err := e.src.Update(obj); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) delete(name string) {
	e.t.Helper()
	if _, err := e.src.Delete("ns", name); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) addHandler(h toolscache.ResourceEventHandler) toolscache.ResourceEventHandlerRegistration {
	e.t.Helper()
	reg, err := e.inf.AddEventHandler(h)
	if err != nil {
		e.t.Fatal(err)
	}
	return reg
}

// cacheVersions returns the informer's cache as name -> resource version.
func cacheVersions(objs []any) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		cm := o.(*corev1.ConfigMap)
		out[cm.Name] = cm.ResourceVersion
	}
	return out
}

func (e *env) sourceVersions() map[string]string {
	out := map[string]string{}
	for _, cm := range e.src.Objects() {
		out[cm.Name] = cm.ResourceVersion
	}
	return out
}

// recorder is a client-go handler that writes each notification down as a
// line: "add NAME@RV initial", "update NAME@RV>RV", "delete NAME@RV", or
// "tombstone KEY NAME@RV" for a DeletedFinalStateUnknown.
type recorder struct {
	mu     sync.Mutex
	events []string
	// gate, when set, is received from before each OnAdd returns.
	gate chan struct{}
}

func at(obj any) string {
	cm := obj.(*corev1.ConfigMap)
	return cm.Name + "@" + cm.ResourceVersion
}

func (r *recorder) record(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, s)
}

func (r *recorder) OnAdd(obj any, initial bool) {
	s := "add " + at(obj)
	if initial {
		s += " initial"
	}
	r.record(s)
	if r.gate != nil {
		<-r.gate
	}
}

func (r *recorder) OnUpdate(old, obj any) {
	r.record("update " + at(old) + ">" + obj.(*corev1.ConfigMap).ResourceVersion)
}

func (r *recorder) OnDelete(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		r.record("tombstone " + d.Key + " " + at(d.Obj))
		return
	}
	r.record("delete " + at(obj))
}

// take returns the notifications recorded since the last take, sorted
// (notifications about different objects have no order between them).
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	slices.Sort(out)
	return out
}

func assertEvents(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

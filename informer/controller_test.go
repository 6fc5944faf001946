package informer_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/reflector"
)

type cmap = *corev1.ConfigMap

func newCM(name string) cmap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

// view is a handler that rebuilds the source's state from notifications
// alone, and fails the test on any call that contradicts what it saw.
type view struct {
	t  *testing.T
	mu sync.Mutex // guards every field below
	// objs is the state the notifications describe, key -> resource version.
	objs                         map[string]string
	initial, adds, updates, dels int
	unknownDels                  int
	resyncs                      int // updates with old == new version
}

func newView(t *testing.T) *view { return &view{t: t, objs: map[string]string{}} }

func (v *view) OnAdd(o cmap, initial bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := o.Namespace + "/" + o.Name
	if _, ok := v.objs[k]; ok {
		v.t.Errorf("add of %s, which the handler already has", k)
	}
	v.objs[k] = o.ResourceVersion
	v.adds++
	if initial {
		v.initial++
	}
}

func (v *view) OnUpdate(old, o cmap) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := o.Namespace + "/" + o.Name
	if got := v.objs[k]; got != old.ResourceVersion {
		v.t.Errorf("update of %s from %s, handler has %q", k, old.ResourceVersion, got)
	}
	if old.ResourceVersion == o.ResourceVersion {
		v.resyncs++
	}
	v.objs[k] = o.ResourceVersion
	v.updates++
}

func (v *view) OnDelete(o cmap, unknown bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := o.Namespace + "/" + o.Name
	if _, ok := v.objs[k]; !ok {
		v.t.Errorf("delete of %s, which the handler does not have", k)
	}
	delete(v.objs, k)
	v.dels++
	if unknown {
		v.unknownDels++
	}
}

func (v *view) snapshot() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for k, rv := range v.objs {
		out = append(out, k+"@"+rv)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func render(objs []cmap) string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Namespace+"/"+o.Name+"@"+o.ResourceVersion)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// errSink collects reported errors.
type errSink struct {
	mu   sync.Mutex // guards errs
	errs []error
}

func (s *errSink) add(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

func (s *errSink) count(target error) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, err := range s.errs {
		if errors.Is(err, target) {
			n++
		}
	}
	return n
}

type ctrlHarness struct {
	src  *fake.Source[cmap]
	c    *informer.Controller[cmap]
	view *view
	errs *errSink
}

// runController runs a controller over a fake source in a synctest bubble.
// opts gets Source, Handler and ErrorHandler filled in.
func runController(t *testing.T, opts informer.ControllerOptions[cmap], seed []string, body func(h *ctrlHarness)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		src, err := fake.New(fake.Options[cmap]{CompactionWindow: 30})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range seed {
			if _, err := src.Create(newCM(n)); err != nil {
				t.Fatal(err)
			}
		}
		h := &ctrlHarness{src: src, view: newView(t), errs: &errSink{}}
		opts.Source = src
		if opts.Handler == nil {
			opts.Handler = h.view
		}
		opts.ErrorHandler = h.errs.add
		h.c, err = informer.NewController(opts)
		if err != nil {
			t.Fatal(err)
		}
		if h.c.HasSynced() {
			t.Fatal("synced before Run")
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- h.c.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}()
		synctest.Wait()
		body(h)
	})
}

// converged fails unless indexer, handler view and source agree.
func (h *ctrlHarness) converged(t *testing.T) {
	t.Helper()
	want := render(h.src.Objects())
	if got := render(h.c.Cache().List()); got != want {
		t.Fatalf("indexer %q, source %q", got, want)
	}
	if got := h.view.snapshot(); got != want {
		t.Fatalf("handler view %q, source %q", got, want)
	}
}

// Synced closes once the first list is in the cache and handed to the
// handler: a handler held in its first call holds it open.
func TestControllerSyncedClosesOnceTheFirstListIsHandled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, err := fake.New(fake.Options[cmap]{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"a", "b"} {
			if _, err := src.Create(newCM(n)); err != nil {
				t.Fatal(err)
			}
		}
		gate := make(chan struct{})
		var seen []string
		c, err := informer.NewController(informer.ControllerOptions[cmap]{Source: src, Handler: informer.HandlerFuncs[cmap]{
			AddFunc: func(o cmap, _ bool) {
				<-gate
				seen = append(seen, o.Name)
			},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		defer func() {
			cancel()
			<-done
		}()
		synctest.Wait()
		select {
		case <-c.Synced():
			t.Fatal("Synced closed while the handler holds the first list")
		default:
		}
		close(gate)
		select {
		case <-c.Synced():
		case <-ctx.Done():
			t.Fatal("Synced never closed")
		}
		if !c.HasSynced() || len(seen) != 2 || c.Cache().Len() != 2 {
			t.Fatalf("synced %v with %v handled and %d cached", c.HasSynced(), seen, c.Cache().Len())
		}
	})
}

func TestControllerDeliversInitialListThenChanges(t *testing.T) {
	runController(t, informer.ControllerOptions[cmap]{}, []string{"a", "b"}, func(h *ctrlHarness) {
		if !h.c.HasSynced() || h.c.LastSyncResourceVersion() != "3" {
			t.Fatalf("synced %v at %q", h.c.HasSynced(), h.c.LastSyncResourceVersion())
		}
		h.converged(t)
		if _, err := h.src.Create(newCM("c")); err != nil {
			t.Fatal(err)
		}
		if _, err := h.src.Update(newCM("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := h.src.Delete("ns", "b"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.converged(t)
		v := h.view
		if v.initial != 2 || v.adds != 3 || v.updates != 1 || v.dels != 1 || v.unknownDels != 0 {
			t.Fatalf("view counts %+v", v)
		}
		if err := h.c.Run(t.Context()); !errors.Is(err, informer.ErrAlreadyStarted) {
			t.Fatalf("second Run: %v", err)
		}
	})
}

func TestControllerWithAnEmptyFirstListSyncs(t *testing.T) {
	// No object: no pop follows the list, so the writer itself must see
	// that the queue has synced and release the waiters.
	runController(t, informer.ControllerOptions[cmap]{}, nil, func(h *ctrlHarness) {
		ctx, cancel := context.WithCancel(context.Background()) // of the bubble
		defer cancel()
		waited := make(chan bool, 1)
		go func() { waited <- h.c.WaitForCacheSync(ctx) }()
		synctest.Wait()
		select {
		case ok := <-waited:
			if !ok {
				t.Fatal("WaitForCacheSync returned false")
			}
		default:
			t.Fatalf("WaitForCacheSync still waiting after the empty list (HasSynced %v)", h.c.HasSynced())
		}
	})
}

func TestControllerDeletesWithUnknownStateAfterMissedDelete(t *testing.T) {
	runController(t, informer.ControllerOptions[cmap]{}, []string{"a", "b"}, func(h *ctrlHarness) {
		h.src.ResetWatches() // the reflector backs off before watching again
		if _, err := h.src.Delete("ns", "a"); err != nil {
			t.Fatal(err)
		}
		h.src.Compact() // and the delete is gone from history: 410, relist
		time.Sleep(time.Minute)
		synctest.Wait()
		h.converged(t)
		if h.view.unknownDels != 1 {
			t.Fatalf("view counts %+v", h.view)
		}
	})
}

func TestControllerResyncRedeliversCachedObjects(t *testing.T) {
	opts := informer.ControllerOptions[cmap]{ResyncPeriod: time.Minute}
	runController(t, opts, []string{"a", "b"}, func(h *ctrlHarness) {
		time.Sleep(90 * time.Second)
		synctest.Wait()
		if h.view.resyncs != 2 || len(h.src.ListCalls())+len(h.src.WatchCalls()) != 1 {
			t.Fatalf("resyncs %d; source calls %d lists, %d watches", h.view.resyncs, len(h.src.ListCalls()), len(h.src.WatchCalls()))
		}
		h.converged(t)
	})
}

func TestControllerTransformsAndIndexes(t *testing.T) {
	opts := informer.ControllerOptions[cmap]{
		Transform: func(o cmap) (cmap, error) {
			o.ManagedFields = nil
			if o.Labels == nil {
				o.Labels = map[string]string{}
			}
			o.Labels["first"] = o.Name[:1]
			return o, nil
		},
		Indexers: cache.Indexers[cmap]{"first": func(o cmap) ([]string, error) { return []string{o.Labels["first"]}, nil }},
	}
	runController(t, opts, []string{"apple", "avocado", "banana"}, func(h *ctrlHarness) {
		got, err := h.c.Cache().ByIndex("first", "a")
		if err != nil || len(got) != 2 {
			t.Fatalf("ByIndex: %d, %v", len(got), err)
		}
	})
}

func TestControllerReportsBadObjectsAndHandlerPanics(t *testing.T) {
	boom := errors.New("bad object")
	opts := informer.ControllerOptions[cmap]{
		Transform: func(o cmap) (cmap, error) {
			if o.Name == "bad" {
				return nil, boom
			}
			return o, nil
		},
		Handler: informer.HandlerFuncs[cmap]{AddFunc: func(o cmap, _ bool) {
			if o.Name == "panics" {
				panic("handler bug")
			}
		}},
	}
	runController(t, opts, []string{"a"}, func(h *ctrlHarness) {
		for _, n := range []string{"bad", "panics", "z"} {
			if _, err := h.src.Create(newCM(n)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		var pe *informer.HandlerPanicError
		h.errs.mu.Lock()
		for _, err := range h.errs.errs {
			errors.As(err, &pe)
		}
		h.errs.mu.Unlock()
		if h.errs.count(boom) != 1 || pe == nil || pe.Value != "handler bug" {
			t.Fatalf("errors %v", h.errs.errs)
		}
		if keys := h.c.Cache().ListKeys(); len(keys) != 3 {
			t.Fatalf("indexer keys %v", keys)
		}
	})
}

// TestControllerSoakHandlerViewMatchesSource runs thousands of random
// writes while faults fire at random; after the source goes quiet, the
// indexer and the handler's view (adds minus deletes) equal the source.
func TestControllerSoakHandlerViewMatchesSource(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	opts := informer.ControllerOptions[cmap]{Settings: reflector.Settings{PageSize: 5, Streaming: reflector.StreamingOn}}
	runController(t, opts, nil, func(h *ctrlHarness) {
		exists := map[string]bool{}
		for range 3000 {
			name := fmt.Sprintf("o%02d", rng.IntN(40))
			var err error
			switch {
			case !exists[name]:
				_, err = h.src.Create(newCM(name))
				exists[name] = true
			case rng.IntN(3) == 0:
				_, err = h.src.Delete("ns", name)
				delete(exists, name)
			default:
				_, err = h.src.Update(newCM(name))
			}
			if err != nil {
				t.Fatal(err)
			}
			if rng.IntN(30) == 0 {
				switch rng.IntN(8) {
				case 0:
					h.src.ResetWatches()
				case 1:
					h.src.DropNextEvent()
				case 2:
					h.src.CloseWatches()
				case 3:
					h.src.CloseNextWatches(1)
				case 4:
					h.src.Compact()
				case 5:
					h.src.RefuseNext(1 + rng.IntN(3))
				case 6:
					h.src.SendError(listwatch.ErrExpired)
				case 7:
					h.src.InjectWrongType("*v1.Secret")
				}
			}
			switch rng.IntN(10) {
			case 0, 1, 2:
				time.Sleep(time.Duration(rng.IntN(2000)) * time.Millisecond)
			case 3, 4, 5:
				synctest.Wait()
			}
		}
		want := render(h.src.Objects())
		for range 120 {
			time.Sleep(10 * time.Second)
			synctest.Wait()
			if render(h.c.Cache().List()) == want && h.view.snapshot() == want {
				break
			}
		}
		h.converged(t)
		st := h.src.Stats()
		t.Logf("faults survived: %d (%+v); handler: %d adds, %d updates, %d deletes (%d state unknown)",
			st.Faults(), st, h.view.adds, h.view.updates, h.view.dels, h.view.unknownDels)
		if st.Faults() == 0 {
			t.Fatal("no fault fired")
		}
	})
}

func ExampleController() {
	src, _ := fake.New(fake.Options[*corev1.ConfigMap]{})
	src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}})

	added := make(chan string, 10)
	c, err := informer.NewController(informer.ControllerOptions[*corev1.ConfigMap]{
		Source: src,
		Handler: informer.HandlerFuncs[*corev1.ConfigMap]{
			AddFunc: func(cm *corev1.ConfigMap, isInInitialList bool) {
				added <- fmt.Sprintf("add %s initial=%v", cm.Name, isInInitialList)
			},
		},
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()

	fmt.Println(<-added)
	src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"}})
	fmt.Println(<-added)
	cancel()
	<-done // Run returns once the reflector and the pop loop have exited
	fmt.Println("synced:", c.HasSynced(), "keys:", len(c.Cache().ListKeys()))
	// Output:
	// add a initial=true
	// add b initial=false
	// synced: true keys: 2
}

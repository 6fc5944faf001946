package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/testenv"
)

func listConfigMaps(namespace string) func(ctx context.Context) ([]*corev1.ConfigMap, error) {
	return func(ctx context.Context) ([]*corev1.ConfigMap, error) {
		l, err := env.Clientset().CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return ptrs(l.Items), nil
	}
}

// relists counts the lists, plain or streaming, a probe has seen.
func relists[T object](p *probe[T]) int {
	lists, watches, _, _, _ := p.snapshot()
	n := len(lists)
	for _, w := range watches {
		if w.SendInitialEvents {
			n++
		}
	}
	return n
}

// A watch held back while objects change and etcd is compacted resumes at
// a version etcd no longer has: 410 Gone. The informer relists, and the
// objects deleted during the gap reach the handler as deletes whose final
// state is unknown, carrying their last known state. (Config maps: the
// watch cache is off for them, so the watch reaches etcd.)
func TestWatchExpiredByCompactionRelists(t *testing.T) {
	ns := namespace(t, "compaction")
	if err := env.CreateConfigMaps(t.Context(), ns, 20, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	src, err := kube.Source[*corev1.ConfigMap](t.Context(), env.RESTConfig(), kube.SourceOptions{Selection: kube.Selection{Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	p := newProbe(src)
	r := runInformer(t, p, informer.Options[*corev1.ConfigMap]{}, false)
	requireCacheMatches(t, r.inf.Cache(), listConfigMaps(ns))
	before := r.inf.LastSyncResourceVersion()
	known := map[string]string{}
	for _, cm := range r.inf.Cache().List() {
		known[cm.Name] = cm.ResourceVersion
	}

	relistsBefore := relists(p)
	p.pause() // the watch drops; reconnection waits
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	deleted := []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4"}
	for _, name := range deleted {
		if err := cms.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 5; i < 8; i++ {
		cm, err := cms.Get(t.Context(), "cm-"+strconv.Itoa(i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["changed"] = "true"
		if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.CreateConfigMaps(t.Context(), ns, 2, testenv.BulkOptions{NamePrefix: "new-"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.CompactEtcd(t.Context()); err != nil {
		t.Fatal(err)
	}
	p.resume()

	requireCacheMatches(t, r.inf.Cache(), listConfigMaps(ns))
	if !p.sawExpired() {
		_, _, errs, _, _ := p.snapshot()
		t.Errorf("no watch failed with 410 Gone after the compaction; watch errors: %v", errs)
	}
	if relists(p) <= relistsBefore {
		t.Errorf("no relist after the watch from %s expired", before)
	}
	eventually(t, "deletes delivered", func() (bool, string) {
		n := 0
		for _, name := range deleted {
			if notes := r.rec.of(name); len(notes) > 0 && notes[len(notes)-1].kind == "delete" {
				n++
			}
		}
		return n == len(deleted), strconv.Itoa(n) + " of the deletes delivered"
	})
	for _, name := range deleted {
		notes := r.rec.of(name)
		d := notes[len(notes)-1]
		if !d.unknown || d.rv != known[name] {
			t.Errorf("%s: delete %+v; want final state unknown, last known version %s", name, d, known[name])
		}
	}
	for _, n := range r.rec.all() {
		if n.kind == "delete" && !slices.Contains(deleted, n.name) {
			t.Errorf("unexpected delete %+v", n)
		}
	}
}

// Restarting the apiserver cuts the watch, refuses connections for a
// while, and starts a new watch cache: the informer reports the outage,
// comes back, and sees what changed after the restart.
func TestAPIServerRestartMidWatch(t *testing.T) {
	ns := namespace(t, "restart")
	if err := env.CreatePods(t.Context(), ns, 30, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	src := podSource(t, kube.SourceOptions{Selection: kube.Selection{Namespace: ns}})
	r := runInformer(t, src, informer.Options[*corev1.Pod]{}, false)
	requireCacheMatches(t, r.inf.Cache(), listPods(ns, metav1.ListOptions{}))
	if n := src.openWatches(); n != 1 {
		t.Fatalf("%d watches open before the restart, want 1", n)
	}
	_, watchesBefore, _, _, _ := src.snapshot()

	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	defer cancel()
	if err := env.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	pods := env.Clientset().CoreV1().Pods(ns)
	if err := pods.Delete(t.Context(), "pod-0", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	if err := env.CreatePods(t.Context(), ns, 3, testenv.BulkOptions{NamePrefix: "after-"}); err != nil {
		t.Fatal(err)
	}
	requireCacheMatches(t, r.inf.Cache(), listPods(ns, metav1.ListOptions{}))
	eventually(t, "new pods notified", func() (bool, string) {
		return len(r.rec.of("after-2")) > 0 && len(r.rec.of("pod-0")) > 1, "not yet"
	})
	broken := false
	for _, err := range r.errs.all() {
		var pe *listwatch.PhaseError
		broken = broken || errors.As(err, &pe)
	}
	if !broken {
		t.Errorf("the outage was not reported: %v", r.errs.all())
	}
	if _, watches, _, _, _ := src.snapshot(); len(watches) <= len(watchesBefore) {
		t.Errorf("no new watch after the restart")
	}
}

// backoffs is a metrics provider recording the reflector's back-off delays.
type backoffs struct {
	mu     sync.Mutex
	delays []float64
}

func (b *backoffs) NewInformerMetrics(string) metrics.InformerMetrics {
	return metrics.InformerMetrics{}
}
func (b *backoffs) NewHandlerMetrics(string, string) metrics.HandlerMetrics {
	return metrics.HandlerMetrics{}
}
func (b *backoffs) NewReflectorMetrics(string) metrics.ReflectorMetrics {
	return metrics.ReflectorMetrics{Backoff: b}
}

func (b *backoffs) Observe(v float64) {
	b.mu.Lock()
	b.delays = append(b.delays, v)
	b.mu.Unlock()
}

func (b *backoffs) all() []float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.delays)
}

// A server nobody listens on: every attempt fails as unavailable, is
// reported with its phase, and is retried after a growing back-off; the
// informer never claims to be synced.
func TestUnreachableServerRetriesWithBackoff(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more
	cfg := env.RESTConfig()
	cfg.Host = "https://" + addr
	src, err := kube.Source[*corev1.Pod](t.Context(), cfg, kube.SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := &backoffs{}
	r := runInformer(t, src, informer.Options[*corev1.Pod]{Metrics: m}, true)
	eventually(t, "three failures reported, two back-offs", func() (bool, string) {
		return len(r.errs.all()) >= 3 && len(m.all()) >= 2, fmt.Sprintf("%d errors, back-offs %v", len(r.errs.all()), m.all())
	})
	for _, err := range r.errs.all() {
		var pe *listwatch.PhaseError
		if !errors.As(err, &pe) || !errors.Is(err, listwatch.ErrUnavailable) {
			t.Errorf("reported %v; want a phase error wrapping ErrUnavailable", err)
		}
	}
	delays := m.all()
	// Delays are what the reflector chose, not measured: 800ms doubling,
	// with jitter of up to 100%.
	if delays[0] < 0.8 || delays[len(delays)-1] < 1.6 {
		t.Errorf("back-off delays %v: want at least 0.8s, then growing", delays)
	}
	if r.inf.HasSynced() || len(r.rec.all()) != 0 {
		t.Errorf("synced %v with notifications %v, from no server", r.inf.HasSynced(), r.rec.all())
	}
}

// A resource the server does not serve fails clearly: Resolve names it,
// a typed informer for a type that cannot be listed is refused, and an
// informer for an unknown resource reports the server's 404 and never
// syncs.
func TestUnknownResourceIsAClearError(t *testing.T) {
	if _, err := kube.Resolve(t.Context(), env.RESTConfig(), "gizmos.nowhere.example.com"); !meta.IsNoMatchError(err) {
		t.Errorf("Resolve: %v, want a no-match error", err)
	}
	f, err := kube.NewFactory(env.RESTConfig(), kube.FactoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	if _, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[*corev1.Binding]{}); err == nil {
		t.Errorf("informer for Binding (not listable): no error")
	}

	gvr := schema.GroupVersionResource{Group: "nowhere.example.com", Version: "v1", Resource: "gizmos"}
	src, err := kube.Source[*unstructured.Unstructured](t.Context(), env.RESTConfig(), kube.SourceOptions{Resource: kube.Resource{GVR: gvr}})
	if err != nil {
		t.Fatal(err)
	}
	r := runInformer(t, src, informer.Options[*unstructured.Unstructured]{}, true)
	eventually(t, "failure reported", func() (bool, string) {
		return len(r.errs.all()) > 0, "nothing reported yet"
	})
	err = r.errs.all()[0]
	var pe *listwatch.PhaseError
	if !errors.As(err, &pe) || !apierrors.IsNotFound(err) {
		t.Errorf("reported %v; want a phase error wrapping the server's 404", err)
	}
	if r.inf.HasSynced() {
		t.Error("synced an unknown resource")
	}
}

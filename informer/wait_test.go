package informer

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/reflector"
)

// gatedIndexers is an index whose function blocks, on the pop loop, on an
// object labelled gate=closed until gate is closed: a way to hold the
// cache back while the source moves on.
func gatedIndexers(gate chan struct{}) cache.Indexers[*corev1.ConfigMap] {
	return cache.Indexers[*corev1.ConfigMap]{"gate": func(o *corev1.ConfigMap) ([]string, error) {
		if o.Labels["gate"] == "closed" {
			<-gate
		}
		return nil, nil
	}}
}

// waitResult runs wait on a goroutine and returns a channel for its error.
func waitResult(wait func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- wait() }()
	return ch
}

// A wait for the version of a write returns only once that write is
// readable from the cache, not when the reflector has received it; a wait
// for one key returns as soon as that object is cached, even while changes
// queued after it are held back.
func TestWaitForResourceVersionReturnsOnceTheWriteIsCached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		h := startShared(t, 3, Options[*corev1.ConfigMap]{Indexers: gatedIndexers(gate)}, nil)
		defer h.stop()
		if !h.inf.WaitForCacheSync(t.Context()) {
			t.Fatal("not synced")
		}

		// o0 is updated, then a gated object created (it holds the pop loop
		// up), then o1 updated.
		h.update("o0")
		o0, _ := h.src.Get("ns", "o0")
		gated := cm("gated", 0)
		gated.Labels = map[string]string{"gate": "closed"}
		if _, err := h.src.Create(gated); err != nil {
			t.Fatal(err)
		}
		h.update("o1")
		o1, _ := h.src.Get("ns", "o1")

		ctx := t.Context()
		key := h.inf.WaitForKey(ctx, "ns/o0", o0.ResourceVersion)
		all := waitResult(func() error { return h.inf.WaitForResourceVersion(ctx, o1.ResourceVersion) })
		one := waitResult(func() error { return h.inf.WaitForKey(ctx, "ns/o1", o1.ResourceVersion) })
		synctest.Wait()
		if key != nil {
			t.Fatalf("WaitForKey(o0) = %v", key)
		}
		if got, _, _ := h.inf.Cache().GetByKey("ns/o0"); got.ResourceVersion != o0.ResourceVersion {
			t.Fatalf("WaitForKey(o0) returned with o0 at %s in the cache, want %s", got.ResourceVersion, o0.ResourceVersion)
		}
		select {
		case err := <-all:
			t.Fatalf("WaitForResourceVersion returned (%v) while the cache is held back", err)
		case err := <-one:
			t.Fatalf("WaitForKey(o1) returned (%v) while o1's update is held back", err)
		default:
		}
		if h.inf.LastSyncResourceVersion() != o1.ResourceVersion {
			t.Fatalf("reflector at %s, want %s: the test must hold the cache, not the reflector", h.inf.LastSyncResourceVersion(), o1.ResourceVersion)
		}

		close(gate)
		for _, ch := range []<-chan error{all, one} {
			if err := <-ch; err != nil {
				t.Fatal(err)
			}
			if got, _, _ := h.inf.Cache().GetByKey("ns/o1"); got.ResourceVersion != o1.ResourceVersion {
				t.Fatalf("wait returned with o1 at %s in the cache, want %s", got.ResourceVersion, o1.ResourceVersion)
			}
		}
	})
}

// A deleted object's wait ends once the cache reflects the deletion's
// version: the key is gone.
func TestWaitForKeyCoversADeletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startShared(t, 2, Options[*corev1.ConfigMap]{}, nil)
		defer h.stop()
		h.inf.WaitForCacheSync(t.Context())
		if _, err := h.src.Delete("ns", "o1"); err != nil {
			t.Fatal(err)
		}
		if err := h.inf.WaitForKey(t.Context(), "ns/o1", h.src.ResourceVersion()); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := h.inf.Cache().GetByKey("ns/o1"); ok {
			t.Fatal("wait for a deletion returned with the object cached")
		}
	})
}

// Versions that cannot be compared are refused at once; a wait ends with
// the caller's context or the informer, and before Run it waits for Run.
func TestWaitForResourceVersionErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := startShared(t, 1, Options[*corev1.ConfigMap]{}, nil)
		src.inf.WaitForCacheSync(t.Context())
		for _, rv := range []string{"", "0", "007", "abc", "-3", "1.5"} {
			err := src.inf.WaitForResourceVersion(t.Context(), rv)
			if !errors.Is(err, ErrIncomparableVersion) {
				t.Errorf("rv %q: err = %v, want ErrIncomparableVersion", rv, err)
			}
		}

		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if err := src.inf.WaitForResourceVersion(ctx, "1000000"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("wait past the deadline: %v", err)
		}

		stopped := waitResult(func() error { return src.inf.WaitForKey(t.Context(), "ns/o0", "1000000") })
		synctest.Wait()
		src.stop()
		if err := <-stopped; !errors.Is(err, ErrStopped) {
			t.Errorf("wait when the informer stops: %v, want ErrStopped", err)
		}

		// Not started yet: the wait waits for Run, then for the version.
		var early <-chan error
		late := startShared(t, 0, Options[*corev1.ConfigMap]{}, func(inf *cmInformer) {
			early = waitResult(func() error { return inf.WaitForResourceVersion(t.Context(), "2") })
			synctest.Wait()
			select {
			case err := <-early:
				t.Fatalf("wait before Run returned %v", err)
			default:
			}
		})
		defer late.stop()
		if _, err := late.src.Create(cm("x", 0)); err != nil { // version 2
			t.Fatal(err)
		}
		if err := <-early; err != nil {
			t.Errorf("wait started before Run: %v", err)
		}
		if _, ok, _ := late.inf.Cache().GetByKey("ns/x"); !ok {
			t.Error("wait started before Run returned before the object was cached")
		}
	})
}

// opaqueVersions lists one object at a version that is not an integer,
// and watches nothing.
type opaqueVersions struct{}

func (opaqueVersions) List(context.Context, listwatch.Options) (listwatch.Page[*corev1.ConfigMap], error) {
	o := cm("o", 0)
	o.ResourceVersion = "v1-abc"
	return listwatch.Page[*corev1.ConfigMap]{Items: []*corev1.ConfigMap{o}, ResourceVersion: "v1-abc"}, nil
}

func (opaqueVersions) Watch(ctx context.Context, _ listwatch.Options) (listwatch.Watch[*corev1.ConfigMap], error) {
	return &idleWatch{ctx: ctx, closed: make(chan struct{})}, nil
}

// idleWatch delivers nothing until closed or its context ends.
type idleWatch struct {
	ctx    context.Context
	once   sync.Once
	closed chan struct{}
}

func (w *idleWatch) Next() (listwatch.Event[*corev1.ConfigMap], error) {
	select {
	case <-w.ctx.Done():
	case <-w.closed:
	}
	return listwatch.Event[*corev1.ConfigMap]{}, io.EOF
}

func (w *idleWatch) Close() error {
	w.once.Do(func() { close(w.closed) })
	return nil
}

// A source whose versions are not KEP-5504's integers cannot be waited on.
func TestWaitOnASourceWithOpaqueVersions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inf, err := NewShared(Options[*corev1.ConfigMap]{Source: opaqueVersions{},
			Settings: reflector.Settings{Streaming: reflector.StreamingOff}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := waitResult(func() error { return inf.Run(ctx) })
		defer func() {
			cancel()
			<-done
		}()
		inf.WaitForCacheSync(ctx)
		err = inf.WaitForResourceVersion(ctx, "5")
		if !errors.Is(err, ErrIncomparableVersion) || !strings.Contains(err.Error(), "v1-abc") {
			t.Fatalf("err = %v, want ErrIncomparableVersion naming the informer's version", err)
		}
	})
}

// The lag metric reports how long a change took to reach the cache: here
// the time the pop loop is held back.
func TestLagMetricMeasuresTheCacheHeldBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		rec := newMetricsRecorder()
		h := startShared(t, 2, Options[*corev1.ConfigMap]{Name: "cms", Metrics: rec, Indexers: gatedIndexers(gate)}, nil)
		defer h.stop()
		h.inf.WaitForCacheSync(t.Context())
		synctest.Wait()
		if lag := rec.value("informer cms/lag"); lag != 0 {
			t.Fatalf("lag %v after a sync on a clock that did not move, want 0", lag)
		}
		gated := cm("gated", 0)
		gated.Labels = map[string]string{"gate": "closed"}
		if _, err := h.src.Create(gated); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(42 * time.Second) // the cache is held back meanwhile
		close(gate)
		synctest.Wait()
		if lag := rec.value("informer cms/lag"); lag != 42 {
			t.Fatalf("lag %v, want the 42s the change waited", lag)
		}
	})
}

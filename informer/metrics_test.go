package informer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/reflector"
)

// metricsRecorder is a metrics.Provider that keeps, per instrument, the
// number of updates and the last value, keyed "<set name>/<instrument>"
// (a handler's set is named "<informer>/<handler>").
type metricsRecorder struct {
	mu    sync.Mutex // guards n and last
	n     map[string]int
	last  map[string]float64
	names []string // every set asked for, in order
}

func newMetricsRecorder() *metricsRecorder {
	return &metricsRecorder{n: map[string]int{}, last: map[string]float64{}}
}

type recorded struct {
	r   *metricsRecorder
	key string
}

func (i recorded) Inc()              { i.Observe(1) }
func (i recorded) Set(v float64)     { i.Observe(v) }
func (i recorded) Observe(v float64) { i.r.record(i.key, v) }

func (r *metricsRecorder) record(key string, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n[key]++
	r.last[key] = v
}

// get returns how often key was updated and its last value.
func (r *metricsRecorder) get(key string) (int, float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[key], r.last[key]
}

func (r *metricsRecorder) value(key string) float64 { _, v := r.get(key); return v }

func (r *metricsRecorder) asked(set string) recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, set)
	return recorded{r: r, key: set}
}

func (r *metricsRecorder) sub(set recorded, name string) recorded {
	return recorded{r: r, key: set.key + "/" + name}
}

func (r *metricsRecorder) NewReflectorMetrics(name string) metrics.ReflectorMetrics {
	s := r.asked("reflector " + name)
	return metrics.ReflectorMetrics{
		PagedLists:     metrics.ListMetrics{Attempts: r.sub(s, "paged")},
		StreamingLists: metrics.ListMetrics{Attempts: r.sub(s, "streaming")},
		AddedEvents:    r.sub(s, "added"),
	}
}

func (r *metricsRecorder) NewInformerMetrics(name string) metrics.InformerMetrics {
	s := r.asked("informer " + name)
	return metrics.InformerMetrics{QueueDepth: r.sub(s, "depth"), Objects: r.sub(s, "objects"), Lag: r.sub(s, "lag"),
		Checkpoint: metrics.CheckpointMetrics{
			Loaded: r.sub(s, "ckpt-loaded"), LoadedObjects: r.sub(s, "ckpt-objects"), LoadedAge: r.sub(s, "ckpt-age"),
			Refused: func(reason string) metrics.Counter { return r.sub(s, "ckpt-refused-"+reason) },
			Writes:  r.sub(s, "ckpt-writes"), WriteErrors: r.sub(s, "ckpt-write-errors"),
			WrittenBytes: r.sub(s, "ckpt-bytes"), WriteDuration: r.sub(s, "ckpt-write-duration"),
		}}
}

func (r *metricsRecorder) NewHandlerMetrics(informer, handler string) metrics.HandlerMetrics {
	s := r.asked("handler " + informer + "/" + handler)
	return metrics.HandlerMetrics{Backlog: r.sub(s, "backlog"), Merged: r.sub(s, "merged")}
}

// TestSharedHandlerBacklogGrowsWhileHandlerIsStuck blocks a handler in a
// call and pushes changes: the backlog gauge reads the pending calls while
// the handler is still blocked (and, past the merge threshold, the merged
// backlog), then falls to zero once the handler is released.
func TestSharedHandlerBacklogGrowsWhileHandlerIsStuck(t *testing.T) {
	const objects = 3
	// Updates after the one the handler is stuck in, round-robin over
	// the objects starting with o1.
	const pushed = 5
	for _, tc := range []struct {
		name         string
		minThreshold int // 0: the default
		backlog      float64
		merged       int
	}{
		{"ordered", 0, pushed, 0},
		// Merging starts when a fourth call is pending (more than the 3
		// cached objects): one entry per object is left.
		{"merged", 2, objects, pushed - objects},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := newMetricsRecorder()
				release := make(chan struct{})
				var mu sync.Mutex // guards updates
				updates := 0
				handler := HandlerFuncs[*corev1.ConfigMap]{UpdateFunc: func(_, _ *corev1.ConfigMap) {
					mu.Lock()
					updates++
					mu.Unlock()
					<-release
				}}
				h := startShared(t, objects, Options[*corev1.ConfigMap]{Name: "cms", Metrics: rec}, func(inf *cmInformer) {
					if tc.minThreshold > 0 {
						inf.handlers.minThreshold = tc.minThreshold
					}
					if _, err := inf.AddHandler(handler, HandlerOptions{Name: "stuck"}); err != nil {
						t.Fatal(err)
					}
				})
				defer h.stop()
				synctest.Wait()
				const backlog = "handler cms/stuck/backlog"
				if v := rec.value(backlog); v != 0 {
					t.Fatalf("backlog after the initial list: %v, want 0", v)
				}
				h.update("o0") // the handler gets stuck in this one
				synctest.Wait()
				if v := rec.value(backlog); v != 0 {
					t.Fatalf("backlog with the only call in progress: %v, want 0", v)
				}
				for i := range pushed {
					h.update(fmt.Sprintf("o%d", (i+1)%objects))
					synctest.Wait()
				}
				mu.Lock()
				calls := updates
				mu.Unlock()
				if calls != 1 {
					t.Fatalf("handler made %d update calls, want 1 (stuck)", calls)
				}
				if v := rec.value(backlog); v != tc.backlog {
					t.Errorf("backlog while stuck: %v, want %v", v, tc.backlog)
				}
				if n, _ := rec.get("handler cms/stuck/merged"); n != tc.merged {
					t.Errorf("merged %d, want %d", n, tc.merged)
				}
				close(release)
				synctest.Wait()
				if v := rec.value(backlog); v != 0 {
					t.Errorf("backlog once released: %v, want 0", v)
				}
			})
		})
	}
}

// TestSharedReportsEachSetOnceUnderItsName checks which sets an informer
// asks for: one for itself and one for its reflector, both under its name,
// and one per handler; and that its own instruments read its cache.
func TestSharedReportsEachSetOnceUnderItsName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newMetricsRecorder()
		h := startShared(t, 4, Options[*corev1.ConfigMap]{Name: "cms", Metrics: rec}, func(inf *cmInformer) {
			inf.AddHandler(HandlerFuncs[*corev1.ConfigMap]{}, HandlerOptions{Name: "h"})
		})
		synctest.Wait()
		if _, err := h.src.Delete("ns", "o3"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.stop()
		rec.mu.Lock()
		names := fmt.Sprint(slices.Sorted(slices.Values(rec.names)))
		rec.mu.Unlock()
		if want := "[handler cms/h informer cms reflector cms]"; names != want {
			t.Errorf("sets asked for: %s, want %s", names, want)
		}
		if v := rec.value("informer cms/objects"); v != 3 {
			t.Errorf("objects %v, want 3", v)
		}
		if n, v := rec.get("informer cms/depth"); n == 0 || v != 0 {
			t.Errorf("queue depth set %d times, last %v; want set, last 0", n, v)
		}
		if v := rec.value("reflector cms/streaming"); v != 1 {
			t.Errorf("streaming lists: %v, want 1", v)
		}
	})
}

// TestControllerReportsReflectorAndQueueToTheProvider runs a plain
// controller with a provider: its reflector and its own queue and cache
// report under its name, in the list mode configured.
func TestControllerReportsReflectorAndQueueToTheProvider(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			src.Create(cm(fmt.Sprintf("o%d", i), 0))
		}
		rec := newMetricsRecorder()
		c, err := NewController(ControllerOptions[*corev1.ConfigMap]{
			Name: "ctl", Source: src, Metrics: rec, ErrorHandler: func(error) {},
			Settings: reflector.Settings{Streaming: reflector.StreamingOff},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- c.Run(ctx) }()
		synctest.Wait()
		src.Create(cm("o2", 0))
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string]float64{
			"reflector ctl/paged": 1, "reflector ctl/added": 1, "informer ctl/objects": 3, "informer ctl/depth": 0,
		} {
			if n, v := rec.get(key); n == 0 || v != want {
				t.Errorf("%s: set %d times, last %v; want %v", key, n, v, want)
			}
		}
		if n, _ := rec.get("reflector ctl/streaming"); n != 0 {
			t.Errorf("streaming lists counted with streaming off")
		}
	})
}

package reflector_test

import (
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/metrics"
)

// tally is a metrics.ReflectorProvider that records every update by
// instrument name.
type tally struct {
	mu     sync.Mutex // guards counts and last
	counts map[string]int
	last   map[string]float64
}

type instrument struct {
	t    *tally
	name string
}

func (i instrument) Inc()              { i.Observe(1) }
func (i instrument) Set(v float64)     { i.Observe(v) }
func (i instrument) Observe(v float64) { i.t.record(i.name, v) }

func (t *tally) record(name string, v float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts[name]++
	t.last[name] = v
}

func (t *tally) get(name string) (int, float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts[name], t.last[name]
}

func (t *tally) NewReflectorMetrics(string) metrics.ReflectorMetrics {
	i := func(name string) instrument { return instrument{t, name} }
	return metrics.ReflectorMetrics{
		Lists: i("lists"), ListErrors: i("listErrors"), ListDuration: i("listDuration"), ListedItems: i("listedItems"),
		StreamingFallbacks: i("fallbacks"), Watches: i("watches"), WatchErrors: i("watchErrors"),
		WatchDuration: i("watchDuration"), WatchEvents: i("watchEvents"), ShortWatches: i("shortWatches"),
		Skipped: i("skipped"), Backoff: i("backoff"), LastResourceVersion: i("rv"),
	}
}

func TestReflectorReportsMetrics(t *testing.T) {
	m := &tally{counts: map[string]int{}, last: map[string]float64{}}
	opts := plain
	opts.Metrics = m
	run(t, fake.Options[obj]{}, opts, func(h *harness) { h.create("a", "b") }, func(h *harness) {
		if n, v := m.get("listedItems"); n != 1 || v != 2 {
			t.Fatalf("listedItems %d times, last %v", n, v)
		}
		h.src.InjectWrongType("*v1.Secret")
		h.create("c")
		h.settle()
		h.src.CloseNextWatches(1)
		h.src.ResetWatches()
		h.pass(time.Minute)
		h.converged()
		for name, want := range map[string]int{"lists": 2, "skipped": 1, "shortWatches": 1, "watchErrors": 1, "watches": 3} {
			if n, _ := m.get(name); n != want {
				t.Errorf("%s: %d, want %d", name, n, want)
			}
		}
		if n, _ := m.get("backoff"); n != 2 {
			t.Errorf("backoff observed %d times, want 2", n)
		}
		if _, v := m.get("rv"); v != 4 {
			t.Errorf("last resource version %v, want 4", v)
		}
	})
}

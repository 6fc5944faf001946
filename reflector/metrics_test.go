package reflector_test

import (
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/reflector"
)

// tally is a metrics.Provider that records every update of a reflector's
// instruments by instrument name.
type tally struct {
	mu     sync.Mutex // guards counts and last
	counts map[string]int
	last   map[string]float64
}

func newTally() *tally { return &tally{counts: map[string]int{}, last: map[string]float64{}} }

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

// get returns how many times name was updated and its last value.
func (t *tally) get(name string) (int, float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts[name], t.last[name]
}

func (t *tally) n(name string) int { n, _ := t.get(name); return n }

func (t *tally) NewReflectorMetrics(string) metrics.ReflectorMetrics {
	i := func(name string) instrument { return instrument{t, name} }
	mode := func(m string) metrics.ListMetrics {
		return metrics.ListMetrics{Attempts: i(m + ".attempts"), Errors: i(m + ".errors"),
			Duration: i(m + ".duration"), Items: i(m + ".items"), Last: i(m + ".last")}
	}
	return metrics.ReflectorMetrics{
		PagedLists: mode("paged"), StreamingLists: mode("streaming"),
		Watches: i("watches"), WatchErrors: i("watchErrors"), WatchDuration: i("watchDuration"),
		ShortWatches: i("shortWatches"), AddedEvents: i("added"), ModifiedEvents: i("modified"),
		DeletedEvents: i("deleted"), BookmarkEvents: i("bookmark"), ErrorEvents: i("error"),
		Skipped: i("skipped"), Backoff: i("backoff"), LastResourceVersion: i("rv"),
		Failures: func(r string) metrics.Counter { return i("failures." + r) },
		Failing:  func(r string) metrics.Gauge { return i("failing." + r) },
	}
}

func (t *tally) NewInformerMetrics(string) metrics.InformerMetrics { return metrics.InformerMetrics{} }

func (t *tally) NewHandlerMetrics(string, string) metrics.HandlerMetrics {
	return metrics.HandlerMetrics{}
}

func TestReflectorReportsMetrics(t *testing.T) {
	m := newTally()
	opts := plain
	opts.Metrics = m
	run(t, fake.Options[obj]{}, opts, func(h *harness) { h.create("a", "b") }, func(h *harness) {
		if n, v := m.get("paged.items"); n != 1 || v != 2 {
			t.Fatalf("paged.items %d times, last %v", n, v)
		}
		h.src.InjectWrongType("*v1.Secret")
		h.create("c")
		h.settle()
		if _, err := h.src.Delete("ns", "c"); err != nil {
			t.Fatal(err)
		}
		h.settle()
		h.src.CloseNextWatches(1)
		h.src.ResetWatches()
		h.pass(time.Minute)
		h.converged()
		for name, want := range map[string]int{
			"paged.attempts": 2, "skipped": 1, "shortWatches": 1, "watchErrors": 1, "watches": 3,
			"added": 1, "deleted": 1, "streaming.attempts": 0,
		} {
			if n := m.n(name); n != want {
				t.Errorf("%s: %d, want %d", name, n, want)
			}
		}
		if n := m.n("backoff"); n != 2 {
			t.Errorf("backoff observed %d times, want 2", n)
		}
		if _, v := m.get("rv"); v != 5 {
			t.Errorf("last resource version %v, want 5", v)
		}
	})
}

// TestReflectorCountsListsByMode checks that each way of filling the store
// moves its own mode's instruments, and that the last-mode gauges name the
// mode of the last successful list.
func TestReflectorCountsListsByMode(t *testing.T) {
	for _, tc := range []struct {
		name        string
		streaming   reflector.StreamingMode
		unsupported bool
		// want: updates per instrument; lastPaged: the final value of
		// paged.last (streaming.last is its opposite).
		want      map[string]int
		lastPaged float64
	}{
		{"off", reflector.StreamingOff, false,
			map[string]int{"paged.attempts": 1, "paged.items": 1, "paged.errors": 0, "streaming.attempts": 0, "streaming.items": 0}, 1},
		{"auto", reflector.StreamingAuto, false,
			map[string]int{"paged.attempts": 0, "paged.items": 0, "streaming.attempts": 1, "streaming.items": 1, "streaming.errors": 0}, 0},
		{"on", reflector.StreamingOn, false,
			map[string]int{"paged.attempts": 0, "streaming.attempts": 1, "streaming.items": 1}, 0},
		{"auto, unsupported", reflector.StreamingAuto, true,
			map[string]int{"paged.attempts": 1, "paged.items": 1, "streaming.attempts": 1, "streaming.errors": 1, "streaming.items": 0}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTally()
			opts := reflector.Options[obj]{Metrics: m, Settings: reflector.Settings{Streaming: tc.streaming}}
			srcOpts := fake.Options[obj]{StreamingListUnsupported: tc.unsupported}
			run(t, srcOpts, opts, func(h *harness) { h.create("a", "b") }, func(h *harness) {
				h.converged()
				for name, want := range tc.want {
					if n := m.n(name); n != want {
						t.Errorf("%s: %d, want %d", name, n, want)
					}
				}
				mode := "paged"
				if tc.lastPaged == 0 {
					mode = "streaming"
				}
				if n, v := m.get(mode + ".items"); n != 1 || v != 2 {
					t.Errorf("%s.items observed %d times, last %v, want 2 once", mode, n, v)
				}
				if _, v := m.get("paged.last"); v != tc.lastPaged {
					t.Errorf("paged.last %v, want %v", v, tc.lastPaged)
				}
				if _, v := m.get("streaming.last"); v != 1-tc.lastPaged {
					t.Errorf("streaming.last %v, want %v", v, 1-tc.lastPaged)
				}
				// The initial events of a streaming list are not watch events.
				if n := m.n("added"); n != 0 {
					t.Errorf("added events %d, want 0", n)
				}
			})
		})
	}
}

// TestReflectorLastListModeFollowsAFallback streams the first list, then
// makes the relist's stream fail: the paged fallback takes over the
// last-mode gauges.
func TestReflectorLastListModeFollowsAFallback(t *testing.T) {
	fail := true
	srcOpts := fake.Options[obj]{OnWatch: func(o listwatch.Options) error {
		if o.SendInitialEvents && o.ResourceVersion != "" && fail {
			fail = false
			return listwatch.ErrTooLargeResourceVersion
		}
		return nil
	}}
	m := newTally()
	run(t, srcOpts, reflector.Options[obj]{Metrics: m}, func(h *harness) { h.create("a") }, func(h *harness) {
		if _, v := m.get("streaming.last"); v != 1 {
			t.Fatalf("after a streaming list: streaming.last %v, want 1", v)
		}
		h.src.SendError(listwatch.ErrExpired)
		h.pass(time.Minute)
		h.converged()
		if _, v := m.get("streaming.last"); v != 0 {
			t.Errorf("after the fallback: streaming.last %v, want 0", v)
		}
		if _, v := m.get("paged.last"); v != 1 {
			t.Errorf("after the fallback: paged.last %v, want 1", v)
		}
		for name, want := range map[string]int{"streaming.attempts": 2, "streaming.errors": 1, "paged.attempts": 1, "error": 1, "watchErrors": 1} {
			if n := m.n(name); n != want {
				t.Errorf("%s: %d, want %d", name, n, want)
			}
		}
	})
}

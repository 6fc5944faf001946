package workqueue

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kinformer/kinformer/metrics"
)

// recorder is a metrics.WorkqueueProvider that keeps what it is told.
type recorder struct {
	mu       sync.Mutex
	name     string
	inFlight metrics.InFlightFunc
	depth    float64
	adds     int
	retries  int
	latency  []float64
	work     []float64
}

type recorderGauge struct{ r *recorder }

func (g recorderGauge) Set(v float64) { g.r.mu.Lock(); g.r.depth = v; g.r.mu.Unlock() }

type recorderCounter struct {
	n  *int
	mu *sync.Mutex
}

func (c recorderCounter) Inc() { c.mu.Lock(); *c.n++; c.mu.Unlock() }

type recorderHist struct {
	vs *[]float64
	mu *sync.Mutex
}

func (h recorderHist) Observe(v float64) { h.mu.Lock(); *h.vs = append(*h.vs, v); h.mu.Unlock() }

func (r *recorder) NewWorkqueueMetrics(name string, inFlight metrics.InFlightFunc) metrics.WorkqueueMetrics {
	r.name, r.inFlight = name, inFlight
	return metrics.WorkqueueMetrics{
		Depth:        recorderGauge{r},
		Adds:         recorderCounter{&r.adds, &r.mu},
		Retries:      recorderCounter{&r.retries, &r.mu},
		QueueLatency: recorderHist{&r.latency, &r.mu},
		WorkDuration: recorderHist{&r.work, &r.mu},
	}
}

func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		q := New(Options[string]{Name: "things", Metrics: r})
		defer q.ShutDown()
		if r.name != "things" {
			t.Fatalf("provider got name %q", r.name)
		}
		q.Add("a")
		q.Add("a") // de-duplicated: not an add
		q.Add("b")
		if r.depth != 2 || r.adds != 2 {
			t.Fatalf("depth %v adds %d, want 2 and 2", r.depth, r.adds)
		}
		time.Sleep(2 * time.Second)
		getNow(q) // a, after 2s
		if r.depth != 1 || len(r.latency) != 1 || r.latency[0] != 2 {
			t.Fatalf("depth %v latency %v, want 1 and [2]", r.depth, r.latency)
		}
		time.Sleep(time.Second)
		getNow(q) // b, after 3s
		time.Sleep(3 * time.Second)
		if u, l := r.inFlight(); u != 3+4 || l != 4 {
			t.Fatalf("in flight: unfinished %v longest %v, want 7 and 4", u, l)
		}
		q.Done("a")
		if len(r.work) != 1 || r.work[0] != 4 {
			t.Fatalf("work durations %v, want [4]", r.work)
		}
		if u, l := r.inFlight(); u != 3 || l != 3 {
			t.Fatalf("in flight: unfinished %v longest %v, want 3 and 3", u, l)
		}
		q.AddRateLimited("c")
		q.AddRateLimited("c")
		if r.retries != 2 {
			t.Fatalf("retries %d, want 2", r.retries)
		}
		q.Done("b")
		if u, l := r.inFlight(); u != 0 || l != 0 {
			t.Fatalf("in flight with nothing held: %v %v", u, l)
		}
	})
}

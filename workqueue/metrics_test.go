package workqueue

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kinformer/kinformer/metrics"
)

// recorder is a metrics.WorkqueueProvider that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	name    string
	sample  metrics.WorkqueueSampler
	latency map[int][]float64 // by priority
	adds    int
	retries int
	work    []float64
}

// depth samples the depth by priority.
func (r *recorder) depth() map[int]int {
	d := map[int]int{}
	for _, p := range r.sample().Priorities {
		d[p.Priority] = p.Depth
	}
	return d
}

// oldest samples the oldest item's age by priority, highest first.
func (r *recorder) oldest() []float64 {
	var o []float64
	for _, p := range r.sample().Priorities {
		o = append(o, p.Oldest)
	}
	return o
}

type recorderCounter struct {
	n  *int
	mu *sync.Mutex
}

func (c recorderCounter) Inc() { c.mu.Lock(); *c.n++; c.mu.Unlock() }

type recorderHist struct {
	r *recorder
	p int
}

func (h recorderHist) Observe(v float64) {
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	if h.p == workPriority {
		h.r.work = append(h.r.work, v)
	} else {
		h.r.latency[h.p] = append(h.r.latency[h.p], v)
	}
}

// workPriority marks the work-duration histogram in recorderHist.
const workPriority = -1 << 40

func (r *recorder) NewWorkqueueMetrics(name string, sample metrics.WorkqueueSampler) metrics.WorkqueueMetrics {
	r.name, r.sample = name, sample
	r.latency = map[int][]float64{}
	return metrics.WorkqueueMetrics{
		Adds:         recorderCounter{&r.adds, &r.mu},
		Retries:      recorderCounter{&r.retries, &r.mu},
		WorkDuration: recorderHist{r, workPriority},
		QueueLatency: func(p int) metrics.Histogram { return recorderHist{r, p} },
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
		if d := r.depth(); d[PriorityNormal] != 2 || r.adds != 2 {
			t.Fatalf("depth %v adds %d, want 2 and 2", d, r.adds)
		}
		time.Sleep(2 * time.Second)
		getNow(q) // a, after 2s
		if d := r.depth(); d[PriorityNormal] != 1 || !slices.Equal(r.latency[PriorityNormal], []float64{2}) {
			t.Fatalf("depth %v latency %v, want 1 and [2]", d, r.latency)
		}
		time.Sleep(time.Second)
		getNow(q) // b, after 3s
		time.Sleep(3 * time.Second)
		if s := r.sample(); s.Unfinished != 3+4 || s.Longest != 4 {
			t.Fatalf("in flight: unfinished %v longest %v, want 7 and 4", s.Unfinished, s.Longest)
		}
		q.Done("a")
		q.Len() // a Done is recorded once applied
		if len(r.work) != 1 || r.work[0] != 4 {
			t.Fatalf("work durations %v, want [4]", r.work)
		}
		if s := r.sample(); s.Unfinished != 3 || s.Longest != 3 {
			t.Fatalf("in flight: unfinished %v longest %v, want 3 and 3", s.Unfinished, s.Longest)
		}
		q.AddRateLimited("c")
		q.AddRateLimited("c")
		if r.retries != 2 {
			t.Fatalf("retries %d, want 2", r.retries)
		}
		q.Done("b")
		if s := r.sample(); s.Unfinished != 0 || s.Longest != 0 {
			t.Fatalf("in flight with nothing held: %v %v", s.Unfinished, s.Longest)
		}
	})
}

func TestMetricsByPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		q := New(Options[string]{Metrics: r})
		defer q.ShutDown()
		q.AddWithOptions("low1", AddOptions{Priority: PriorityLow})
		time.Sleep(time.Second)
		q.AddWithOptions("low2", AddOptions{Priority: PriorityLow})
		time.Sleep(time.Second)
		q.Add("normal")
		time.Sleep(time.Second)
		if d := r.depth(); d[PriorityLow] != 2 || d[PriorityNormal] != 1 {
			t.Fatalf("depth by priority %v, want low 2 normal 1", d)
		}
		if o := r.oldest(); !slices.Equal(o, []float64{1, 3}) {
			t.Fatalf("oldest %v, want [1 3] (normal, low)", o)
		}

		// Raising low1 moves it between depths and keeps its age.
		q.Add("low1")
		if d := r.depth(); d[PriorityLow] != 1 || d[PriorityNormal] != 2 || r.adds != 3 {
			t.Fatalf("after raise: depth %v adds %d, want low 1 normal 2, 3 adds", d, r.adds)
		}
		if o := r.oldest(); !slices.Equal(o, []float64{3, 2}) {
			t.Fatalf("oldest after raise %v, want [3 2]", o)
		}
		if got := []string{getNow(q), getNow(q), getNow(q)}; !slices.Equal(got, []string{"normal", "low1", "low2"}) {
			t.Fatalf("handed out %v", got)
		}
		if !slices.Equal(r.latency[PriorityNormal], []float64{1, 3}) || !slices.Equal(r.latency[PriorityLow], []float64{2}) {
			t.Fatalf("latency by priority %v", r.latency)
		}

		// An item held and added again waits at the priority of that add.
		q.AddWithOptions("normal", AddOptions{Priority: PriorityLow})
		if d := r.depth(); d[PriorityLow] != 1 || d[PriorityNormal] != 0 || q.Len() != 1 {
			t.Fatalf("held and re-added: depth %v Len %d", d, q.Len())
		}
		if s := r.sample(); !slices.Equal(r.oldest(), []float64{0, 0}) || s.Unfinished != 0 {
			t.Fatalf("sample %+v, want no age and nothing in flight for long", s)
		}
	})
}

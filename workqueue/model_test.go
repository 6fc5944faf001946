package workqueue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// refQueue is the queue's contract with priorities written as plainly as
// possible: slices and maps, linear scans, no cleverness. The model-based
// test below drives it and a Queue with the same random operations and
// compares everything observable after each one.
type refQueue struct {
	now time.Duration
	seq int // order of joining a line (or of delaying, for delayed adds)
	// ready are the items waiting that no worker holds.
	ready []refReady
	// held maps an item a worker holds to what the queue knows of it.
	held map[int]*refHeld
	// delayed maps an item to its pending delayed add.
	delayed map[int]refDelayed
	// blocked are the ids of the Gets blocked on an empty queue, oldest first.
	blocked []int
	// failures is the exponential limiter's count per item.
	failures map[int]int
	shutdown bool
}

type refReady struct{ item, priority, seq int }

type refHeld struct {
	out     int  // priority it was handed out at
	readded bool // added again while held
	again   int  // highest priority of those adds
}

type refDelayed struct {
	at            time.Duration
	seq, priority int
}

// handout is one item handed to a blocked Get, or the shutdown (ok false).
type handout struct {
	id, item int
	ok       bool
}

func newRefQueue() *refQueue {
	return &refQueue{held: map[int]*refHeld{}, delayed: map[int]refDelayed{}, failures: map[int]int{}}
}

// add is an add at priority p; it returns what a blocked Get received.
func (m *refQueue) add(k, p int) []handout {
	if m.shutdown {
		return nil
	}
	if h, ok := m.held[k]; ok {
		if !h.readded {
			h.readded, h.again = true, p
		} else {
			h.again = max(h.again, p)
		}
		return nil
	}
	for i := range m.ready {
		if r := &m.ready[i]; r.item == k {
			if p > r.priority {
				m.seq++
				r.priority, r.seq = p, m.seq
			}
			return nil
		}
	}
	if len(m.blocked) > 0 {
		id := m.blocked[0]
		m.blocked = m.blocked[1:]
		m.held[k] = &refHeld{out: p}
		return []handout{{id: id, item: k, ok: true}}
	}
	m.seq++
	m.ready = append(m.ready, refReady{item: k, priority: p, seq: m.seq})
	return nil
}

// next returns the index in ready of the item Get hands out: highest
// priority, then earliest to join.
func (m *refQueue) next() int {
	best := -1
	for i, r := range m.ready {
		if best < 0 || r.priority > m.ready[best].priority ||
			(r.priority == m.ready[best].priority && r.seq < m.ready[best].seq) {
			best = i
		}
	}
	return best
}

// get is a Get that does not block: (item, nil), ErrShutDown, or
// context.Canceled for "would block".
func (m *refQueue) get() (int, error) {
	if i := m.next(); i >= 0 {
		r := m.ready[i]
		m.ready = slices.Delete(m.ready, i, i+1)
		m.held[r.item] = &refHeld{out: r.priority}
		return r.item, nil
	}
	if m.shutdown && m.waiting() == 0 {
		return 0, ErrShutDown
	}
	return 0, context.Canceled
}

// block registers a blocking Get with the given id; it returns what it got
// at once, if anything.
func (m *refQueue) block(id int) []handout {
	if k, err := m.get(); err == nil {
		return []handout{{id: id, item: k, ok: true}}
	} else if errors.Is(err, ErrShutDown) {
		return []handout{{id: id}}
	}
	m.blocked = append(m.blocked, id)
	return nil
}

func (m *refQueue) done(k int) []handout {
	h, ok := m.held[k]
	if !ok {
		return nil
	}
	delete(m.held, k)
	var out []handout
	if h.readded {
		if len(m.blocked) > 0 {
			id := m.blocked[0]
			m.blocked = m.blocked[1:]
			m.held[k] = &refHeld{out: h.again}
			out = append(out, handout{id: id, item: k, ok: true})
		} else {
			m.seq++
			m.ready = append(m.ready, refReady{item: k, priority: h.again, seq: m.seq})
		}
	}
	return append(out, m.releaseBlocked()...)
}

// releaseBlocked tells the blocked Gets the queue shut down once nothing is
// left to hand out.
func (m *refQueue) releaseBlocked() []handout {
	if !m.shutdown || m.waiting() > 0 {
		return nil
	}
	var out []handout
	for _, id := range m.blocked {
		out = append(out, handout{id: id})
	}
	m.blocked = nil
	return out
}

// own is the priority a delayed add keeps (see AddAfter).
func (m *refQueue) own(k int) int {
	if h, ok := m.held[k]; ok {
		if h.readded {
			return h.again
		}
		return h.out
	}
	for _, r := range m.ready {
		if r.item == k {
			return r.priority
		}
	}
	if d, ok := m.delayed[k]; ok {
		return d.priority
	}
	return PriorityNormal
}

func (m *refQueue) addAfter(k int, d time.Duration, p int) []handout {
	if m.shutdown {
		return nil
	}
	if d <= 0 {
		return m.add(k, p)
	}
	m.seq++
	at := m.now + d
	old, ok := m.delayed[k]
	switch {
	case !ok:
		m.delayed[k] = refDelayed{at: at, seq: m.seq, priority: p}
	case at < old.at:
		m.delayed[k] = refDelayed{at: at, seq: m.seq, priority: max(p, old.priority)}
	default:
		old.priority = max(p, old.priority)
		m.delayed[k] = old
	}
	return nil
}

// rateLimited is AddRateLimited with NewExponential's defaults (5ms base).
func (m *refQueue) rateLimited(k int) []handout {
	n := m.failures[k]
	m.failures[k] = n + 1
	return m.addAfter(k, 5*time.Millisecond<<n, m.own(k))
}

// sleep lets d pass: the delayed adds due meanwhile happen in due order.
func (m *refQueue) sleep(d time.Duration) []handout {
	m.now += d
	var out []handout
	for {
		var due []int
		for k, dl := range m.delayed {
			if dl.at <= m.now {
				due = append(due, k)
			}
		}
		if len(due) == 0 {
			return out
		}
		slices.SortFunc(due, func(a, b int) int {
			return cmp.Or(cmp.Compare(m.delayed[a].at, m.delayed[b].at), cmp.Compare(m.delayed[a].seq, m.delayed[b].seq))
		})
		k := due[0]
		dl := m.delayed[k]
		delete(m.delayed, k)
		out = append(out, m.add(k, dl.priority)...)
	}
}

func (m *refQueue) shutDown() []handout {
	m.shutdown = true
	clear(m.delayed)
	return m.releaseBlocked()
}

// waiting is what Len reports.
func (m *refQueue) waiting() int {
	n := len(m.ready)
	for _, h := range m.held {
		if h.readded {
			n++
		}
	}
	return n
}

// depths is the number of items waiting per priority.
func (m *refQueue) depths() map[int]int {
	d := map[int]int{}
	for _, r := range m.ready {
		d[r.priority]++
	}
	for _, h := range m.held {
		if h.readded {
			d[h.again]++
		}
	}
	return d
}

// drained reports whether ShutDownWithDrain may return.
func (m *refQueue) drained() bool { return m.shutdown && len(m.ready) == 0 && len(m.held) == 0 }

// TestQueueMatchesReferenceModel runs random sequences of every operation
// (adds at three priorities, raises, adds while held, delayed and
// rate-limited adds, Forget, non-blocking and blocking Gets, Done, the
// clock moving, ShutDown and ShutDownWithDrain) against the queue and
// against refQueue, in a synctest bubble so that delays are exact, and
// after each operation compares: what every Get returned, which blocked Get
// received what, Len, the depth reported per priority, and whether a drain
// has finished.
//
// Odd seeds make every Add and Done go through the queue's log (intake.go),
// as they do when workers contend for the queue; even seeds let them take
// the lock when it is free, as a lone goroutine does.
func TestQueueMatchesReferenceModel(t *testing.T) {
	seeds, ops := 150, 250
	if testing.Short() {
		seeds = 30
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { runModel(t, seed, ops) })
		})
	}
}

func runModel(t *testing.T, seed uint64, ops int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	rec := &recorder{}
	q := New(Options[int]{Metrics: rec, RateLimiter: NewExponential[int](ExponentialOptions{})})
	q.alwaysLog = seed%2 == 1
	defer q.ShutDown()
	m := newRefQueue()
	priorities := []int{PriorityLow, PriorityNormal, 5}
	delays := []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	results := make(chan handout, 64) // from blocked Gets
	got := map[int]handout{}          // by Get id, once returned
	nextID := 0
	var drain chan error // ShutDownWithDrain's result, once called
	drainDone := false
	var log []string
	// checkHandouts lets the other goroutines run, then checks that the
	// blocked Gets returned exactly the handouts the model made.
	checkHandouts := func(step int, op string, want []handout) {
		t.Helper()
		synctest.Wait()
	collect:
		for {
			select {
			case h := <-results:
				got[h.id] = h
			default:
				break collect
			}
		}
		for _, w := range want {
			h, ok := got[w.id]
			if !ok || h != w {
				t.Fatalf("step %d %s: blocked Get #%d got %+v (returned %v), model %+v\n%s", step, op, w.id, h, ok, w, recent(log))
			}
			delete(got, w.id)
		}
		for id, h := range got {
			t.Fatalf("step %d %s: blocked Get #%d returned %+v, model says it still waits\n%s", step, op, id, h, recent(log))
		}
	}

	for step := range ops {
		var want []handout
		k := rng.IntN(6)
		p := priorities[rng.IntN(len(priorities))]
		var op string
		switch r := rng.IntN(100); {
		case r < 22:
			op = fmt.Sprintf("AddWithOptions(%d, priority %d)", k, p)
			q.AddWithOptions(k, AddOptions{Priority: p})
			want = m.add(k, p)
		case r < 30:
			op = fmt.Sprintf("Add(%d)", k)
			q.Add(k)
			want = m.add(k, PriorityNormal)
		case r < 36:
			d := delays[rng.IntN(len(delays))]
			op = fmt.Sprintf("AddWithOptions(%d, priority %d, after %v)", k, p, d)
			q.AddWithOptions(k, AddOptions{Priority: p, After: d})
			want = m.addAfter(k, d, p)
		case r < 41:
			d := delays[rng.IntN(len(delays))]
			op = fmt.Sprintf("AddAfter(%d, %v)", k, d)
			q.AddAfter(k, d)
			want = m.addAfter(k, d, m.own(k))
		case r < 46:
			op = fmt.Sprintf("AddRateLimited(%d)", k)
			q.AddRateLimited(k)
			want = m.rateLimited(k)
		case r < 48:
			op = fmt.Sprintf("Forget(%d)", k)
			q.Forget(k)
			delete(m.failures, k)
		case r < 66:
			op = "Get"
			item, err := q.Get(cancelled)
			wantItem, wantErr := m.get()
			if !errors.Is(err, wantErr) || (err == nil && item != wantItem) {
				t.Fatalf("step %d %s: got %d, %v; model %d, %v\n%s", step, op, item, err, wantItem, wantErr, recent(log))
			}
			if err == nil {
				op = fmt.Sprintf("Get = %d", item)
			}
		case r < 72:
			id := nextID
			nextID++
			op = fmt.Sprintf("blocking Get #%d", id)
			go func() {
				item, err := q.Get(context.Background())
				results <- handout{id: id, item: item, ok: err == nil}
			}()
			want = m.block(id)
		case r < 90:
			// Done of a held item, mostly; sometimes of any item.
			if held := slices.Sorted(maps.Keys(m.held)); len(held) > 0 && rng.IntN(5) > 0 {
				k = held[rng.IntN(len(held))]
			}
			op = fmt.Sprintf("Done(%d)", k)
			q.Done(k)
			want = m.done(k)
		case r < 97:
			d := delays[1+rng.IntN(len(delays)-1)]
			op = fmt.Sprintf("sleep %v", d)
			time.Sleep(d)
			want = m.sleep(d)
		case r < 98 && drain == nil:
			op = "ShutDownWithDrain"
			drain = make(chan error, 1)
			go func() { drain <- q.ShutDownWithDrain(context.Background()) }()
			want = m.shutDown()
		default:
			op = "ShutDown"
			q.ShutDown()
			want = m.shutDown()
		}
		log = append(log, op)
		checkHandouts(step, op, want)
		if n, want := q.Len(), m.waiting(); n != want {
			t.Fatalf("step %d %s: Len = %d, model %d\n%s", step, op, n, want, recent(log))
		}
		wantDepth := m.depths()
		for p, d := range rec.depth() {
			if d != wantDepth[p] {
				t.Fatalf("step %d %s: depth at priority %d = %v, model %v\n%s", step, op, p, d, wantDepth[p], recent(log))
			}
		}
		if drain != nil && !drainDone {
			select {
			case err := <-drain:
				if err != nil {
					t.Fatal(err)
				}
				drainDone = true
			default:
			}
			if drainDone != m.drained() {
				t.Fatalf("step %d %s: drain finished %v, model %v\n%s", step, op, drainDone, m.drained(), recent(log))
			}
		}
	}

	// Wind down: shut down, finish every held item and take everything
	// left, which must come out in the model's order; the blocked Gets
	// take part as the model says.
	q.ShutDown()
	checkHandouts(ops, "ShutDown", m.shutDown())
	for step := ops + 1; ; step++ {
		if held := slices.Sorted(maps.Keys(m.held)); len(held) > 0 {
			q.Done(held[0])
			log = append(log, fmt.Sprintf("Done(%d)", held[0]))
			checkHandouts(step, "Done", m.done(held[0]))
			continue
		}
		item, err := q.Get(cancelled)
		wantItem, wantErr := m.get()
		if !errors.Is(err, wantErr) || (err == nil && item != wantItem) {
			t.Fatalf("wind-down Get: %d, %v; model %d, %v\n%s", item, err, wantItem, wantErr, recent(log))
		}
		if err != nil {
			break
		}
		log = append(log, fmt.Sprintf("Get = %d", item))
	}
	if len(m.blocked) > 0 {
		t.Fatalf("model still has blocked Gets %v after the wind-down", m.blocked)
	}
	if drain != nil && !drainDone {
		if err := <-drain; err != nil {
			t.Fatal(err)
		}
	}
}

// recent is the tail of an operation log, for failure messages.
func recent(log []string) string {
	return fmt.Sprint("last operations: ", log[max(0, len(log)-15):])
}

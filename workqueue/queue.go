package workqueue

import (
	"context"
	"errors"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/metrics"
)

// ErrShutDown is returned by Get once the queue has been shut down and has
// nothing left to hand out.
var ErrShutDown = errors.New("workqueue: shut down")

// Options configures [New]. The zero value is a usable, unnamed queue on the
// real clock with the default rate limiter and no metrics.
type Options[T comparable] struct {
	// Name identifies the queue to the metrics provider.
	Name string
	// Clock drives delayed adds, the default rate limiter and the metrics'
	// timings. Nil means clock.RealClock{}.
	Clock clock.WithTicker
	// RateLimiter decides the delay of AddRateLimited and keeps the
	// per-item failure counts behind Forget and NumRequeues. Nil means the
	// maximum of a per-item exponential back-off from 5ms to 1000s and an
	// overall token bucket of 10 adds per second with a burst of 100, both
	// on Clock.
	RateLimiter RateLimiter[T]
	// Metrics receives the queue's measurements. Nil reports nothing and
	// skips reading the clock on the hot path.
	Metrics metrics.WorkqueueProvider
}

// Queue is a typed work queue with the guarantees controllers rely on:
//
//   - Add de-duplicates: an item waiting in the queue is held once however
//     often it is added.
//   - No item is held by two workers at once: an item added while a worker
//     holds it waits until that worker calls Done, then is handed out again.
//   - Items are handed out by priority, highest first (see AddOptions), and
//     among items of one priority in the order they started waiting
//     (FIFO); an item added while held joins the line of its priority when
//     its worker calls Done. Blocked Gets are served in the order they
//     started waiting. Priorities are strict: items at a lower priority
//     wait for as long as items at a higher one keep coming.
//   - Every Add made before ShutDown is followed by a Get of that item, so a
//     worker sees each item at least once after its last add, provided
//     workers keep calling Get until it returns ErrShutDown.
//
// Delayed adds (AddAfter) and rate-limited adds (AddRateLimited) wait on the
// injected clock, in a goroutine the queue starts at the first delayed add
// and ShutDown stops and waits for. Delayed adds still waiting when the queue
// shuts down are dropped.
//
// Items are compared and hashed as map keys are: an interface-typed T
// holding a value that cannot be compared makes Add panic, as a map would.
//
// All methods are safe for concurrent use. Create a Queue with [New]; the
// zero value is not usable.
type Queue[T comparable] struct {
	// The fields up to the first pad are set by New and only read after,
	// without a lock; the pads keep them, the intake, blocked and the
	// fields under mu on separate cache lines, so that a producer reading
	// its side does not miss on a line a worker just wrote (measured by
	// the "workqueue" scenario of bench/ on an otherwise idle machine).

	clock   clock.WithTicker
	limiter RateLimiter[T]
	m       metrics.WorkqueueMetrics
	// seed hashes items (a copy of items' seed, readable without mu).
	seed maphash.Seed
	// observed is true when a metrics provider was given; the clock is
	// only read on the hot path when it is.
	observed bool
	// alwaysLog makes Add and Done log even when mu is free, so that tests
	// drive the log through every path; never set outside tests.
	alwaysLog bool
	// epoch is when the queue was created; item timings are offsets from
	// it (see entryTimes).
	epoch time.Time
	// waiterPool recycles waiters (and their channels) between blocking
	// Gets; it is safe for concurrent use on its own.
	waiterPool sync.Pool

	_ [64]byte
	// in logs the adds and Dones not applied yet; it has its own lock
	// (see intake.go).
	in intake[T]
	_  [64]byte
	// blocked mirrors waiters.len(), for Add to read without mu. Written
	// with mu held.
	blocked atomic.Int32
	_       [64]byte

	// mu guards every field below. The intake (in) has its own lock; the
	// lock order is mu, then in.mu. The rate limiter is called without
	// either, and metrics instruments with mu held (they must not call
	// back into the queue).
	mu sync.Mutex
	// items tracks every item waiting or held, with its state.
	items table[T]
	// waiting counts the items waiting to be handed out: those in the
	// ready lines and those held and added again. It is what Len reports.
	waiting int
	// lines are the ready lines, one per priority, highest priority first
	// (see priority.go). While waiters is not empty, no line has an item
	// ready.
	lines []*line
	// waiters holds the Gets blocked on an empty queue, oldest first. An
	// item (or the shutdown signal) is sent to a waiter's channel only
	// after the waiter has been removed from here.
	waiters ring[*waiter[T]]
	// shuttingDown is set once by ShutDown; adds are ignored from then on.
	shuttingDown bool
	// drained is closed by whoever, with mu held, first sees the queue shut
	// down with no item waiting or processing.
	drained chan struct{}
	// delay holds the delayed adds; see delay.go.
	delay delays[T]
	// spare is the intake's other buffer, swapped in when the intake is
	// applied so that neither allocates in the steady state.
	spare []op[T]
}

// waiter is one blocked Get.
type waiter[T any] struct {
	// ch receives exactly one handoff per wait, sent with Queue.mu held
	// after the waiter left Queue.waiters; capacity 1, so the sender never
	// blocks. Never closed: waiters are reused.
	ch chan handoff[T]
}

// handoff is what a blocked Get receives: an item it now holds, or (ok
// false) the news that the queue shut down.
type handoff[T any] struct {
	item T
	ok   bool
}

// New returns an empty queue configured by opts.
func New[T comparable](opts Options[T]) *Queue[T] {
	c := opts.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	limiter := opts.RateLimiter
	if limiter == nil {
		limiter = NewMax(
			NewExponential[T](ExponentialOptions{}),
			NewBucket[T](BucketOptions{Clock: c}),
		)
	}
	q := &Queue[T]{
		clock:   c,
		limiter: limiter,
		drained: make(chan struct{}),
		epoch:   c.Now(),
	}
	q.items.init()
	q.seed = q.items.seed
	q.waiterPool.New = func() any { return &waiter[T]{ch: make(chan handoff[T], 1)} }
	if opts.Metrics != nil {
		q.observed = true
		q.items.timed = true
		q.m = opts.Metrics.NewWorkqueueMetrics(opts.Name, q.sample)
	}
	q.m = q.m.WithDefaults()
	return q
}

// Add marks item as needing processing, at PriorityNormal. It does nothing
// if the item is already waiting (at any priority) or the queue is shutting
// down. It never blocks on workers.
func (q *Queue[T]) Add(item T) { q.add(item, PriorityNormal) }

// add is Add at priority p.
func (q *Queue[T]) add(item T, p int) {
	// Hashed outside any lock: the seed never changes.
	o := op[T]{item: item, hash: q.hash(item), priority: p}
	if q.observed {
		o.at = q.now()
	}
	if !q.alwaysLog && q.mu.TryLock() {
		// Nobody holds the queue: add at once, which costs less than
		// logging when the item is already waiting.
		q.applyIntakeLocked()
		if !q.shuttingDown {
			q.addLocked(item, o.hash, p, o.at)
		}
		q.mu.Unlock()
		return
	}
	q.log(o) // dropped once shut down
}

// addLocked makes item, whose hash is h, wait at priority p unless it
// already waits at p or higher, handing it straight to a blocked Get when
// one is waiting and no worker holds the item. at is when the add was made
// (see entryTimes), 0 for now.
func (q *Queue[T]) addLocked(item T, h uint64, p int, at int64) {
	idx := q.items.find(item, h)
	if idx >= 0 {
		e := q.items.at(idx)
		switch {
		case e.state == stateHeld:
			e.state = stateHeldReadded
			e.priority = p
			q.waiting++
			l := q.lineLocked(p)
			l.waiting++
			q.addedLocked(idx, at)
		case p <= e.priority:
			// Already waiting, at p or higher.
		case e.state == stateHeldReadded:
			q.lineLocked(e.priority).waiting--
			q.lineLocked(p).waiting++
			e.priority = p
		default: // ready: move to the end of the higher line
			from, to := q.lineLocked(e.priority), q.lineLocked(p)
			from.unlink(e.pos)
			from.waiting--
			e.pos = to.push(idx)
			to.waiting++
			e.priority = p
		}
		return
	}
	if q.waiters.len() > 0 {
		idx = q.items.insert(item, h, stateHeld, p)
		q.addedLocked(idx, at)
		q.handOutLocked(idx, q.lineLocked(p))
		q.popWaiterLocked().ch <- handoff[T]{item: item, ok: true}
		return
	}
	idx = q.items.insert(item, h, stateReady, p)
	l := q.lineLocked(p)
	q.items.at(idx).pos = l.push(idx)
	l.waiting++
	q.waiting++
	q.addedLocked(idx, at)
}

// addedLocked reports an add, made at at (0: now), that made the item at
// arena index idx wait.
func (q *Queue[T]) addedLocked(idx int32, at int64) {
	q.m.Adds.Inc()
	if q.observed {
		if at == 0 {
			at = q.now()
		}
		q.items.times[idx].added = at
	}
}

// hash returns item's hash. It reads only the seed, set by New.
func (q *Queue[T]) hash(item T) uint64 { return maphash.Comparable(q.seed, item) }

// now returns the clock's time as an offset from the epoch plus 1ns, so
// that it is never 0 (see entryTimes). It reads only fields set by New.
func (q *Queue[T]) now() int64 {
	return int64(q.clock.Since(q.epoch)) + 1
}

// popWaiterLocked removes and returns the oldest blocked Get.
func (q *Queue[T]) popWaiterLocked() *waiter[T] {
	w := q.waiters.pop()
	q.blocked.Store(int32(q.waiters.len()))
	return w
}

// handOutLocked reports that a worker now holds the item at arena index
// idx, taken from line l; the caller has already updated the item's state
// and the waiting counts.
func (q *Queue[T]) handOutLocked(idx int32, l *line) {
	if q.observed {
		now := q.now()
		t := &q.items.times[idx]
		if t.added != 0 {
			l.latency.Observe(time.Duration(now - t.added).Seconds())
			t.added = 0
		}
		t.started = now
	}
}

// Get blocks until it can hand the caller an item, then returns it; the
// caller holds the item until it calls Done with it, and must call Done
// exactly once. The item is the first of the highest priority that has one
// waiting. Get returns ctx.Err() if ctx ends first, and ErrShutDown once
// the queue has shut down and no item is left to hand out (including items
// waiting for a worker's Done). An item handed over while ctx ends is
// returned, with a nil error.
func (q *Queue[T]) Get(ctx context.Context) (T, error) {
	var zero T
	q.mu.Lock()
	q.applyIntakeLocked()
	for _, l := range q.lines {
		if l.ready == 0 {
			continue
		}
		idx := l.pop()
		l.waiting--
		q.waiting--
		e := q.items.at(idx)
		e.state = stateHeld
		item := e.item
		q.handOutLocked(idx, l)
		q.mu.Unlock()
		return item, nil
	}
	if q.shuttingDown && q.waiting == 0 {
		q.mu.Unlock()
		return zero, ErrShutDown
	}
	if err := ctx.Err(); err != nil {
		q.mu.Unlock()
		return zero, err
	}
	w := q.waiterPool.Get().(*waiter[T])
	q.waiters.push(w)
	q.blocked.Store(int32(q.waiters.len()))
	// An Add or Done logged before the store above may not have seen
	// this waiter: look again (see intake).
	q.applyIntakeLocked()
	q.mu.Unlock()

	var h handoff[T]
	select {
	case h = <-w.ch:
	case <-ctx.Done():
		q.mu.Lock()
		removed := remove(&q.waiters, w)
		q.blocked.Store(int32(q.waiters.len()))
		q.mu.Unlock()
		if removed {
			q.waiterPool.Put(w)
			return zero, ctx.Err()
		}
		// Lost the race: a handoff was sent before we took the lock.
		h = <-w.ch
	}
	q.waiterPool.Put(w)
	if !h.ok {
		return zero, ErrShutDown
	}
	return h.item, nil
}

// Done tells the queue the caller has finished with item, which it got from
// Get. If the item was added again meanwhile it is handed out again, at the
// priority of those adds. Done of an item no worker holds does nothing.
func (q *Queue[T]) Done(item T) {
	o := op[T]{item: item, hash: q.hash(item), done: true}
	if q.observed {
		o.at = q.now()
	}
	if q.alwaysLog || !q.mu.TryLock() {
		if q.log(o) {
			return // applied by the next holder of mu, before anything else
		}
		q.mu.Lock() // shut down: the log is closed
	}
	defer q.mu.Unlock()
	q.applyIntakeLocked()
	q.doneLocked(item, o.hash, o.at)
}

// doneLocked is Done of item, whose hash is h, made at at (0: now).
func (q *Queue[T]) doneLocked(item T, h uint64, at int64) {
	idx := q.items.find(item, h)
	if idx < 0 || q.items.at(idx).state == stateReady {
		return
	}
	if q.observed {
		t := &q.items.times[idx]
		if t.started != 0 {
			if at == 0 {
				at = q.now()
			}
			q.m.WorkDuration.Observe(time.Duration(at - t.started).Seconds())
			t.started = 0
		}
	}
	e := q.items.at(idx)
	switch {
	case e.state == stateHeld:
		q.items.remove(idx, h)
	case q.waiters.len() > 0:
		e.state = stateHeld
		l := q.lineLocked(e.priority)
		l.waiting--
		q.waiting--
		q.handOutLocked(idx, l)
		q.popWaiterLocked().ch <- handoff[T]{item: item, ok: true}
	default:
		e.state = stateReady
		e.pos = q.lineLocked(e.priority).push(idx)
	}
	if q.shuttingDown {
		q.afterShutDownChangeLocked()
	}
}

// afterShutDownChangeLocked releases blocked Gets once nothing is left to
// hand out, and ShutDownWithDrain once nothing is left at all.
func (q *Queue[T]) afterShutDownChangeLocked() {
	if q.waiting == 0 {
		for q.waiters.len() > 0 {
			q.popWaiterLocked().ch <- handoff[T]{}
		}
	}
	if q.items.n == 0 {
		select {
		case <-q.drained:
		default:
			close(q.drained)
		}
	}
}

// Len returns the number of distinct items waiting to be handed out,
// including those waiting for a worker to finish an earlier round. It is a
// snapshot for information; do not synchronize on it.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.applyIntakeLocked()
	return q.waiting
}

// ShutDown stops the queue from accepting items: later adds of every kind
// are ignored and delayed adds still waiting are dropped. Items already
// waiting are still handed out; Get returns ErrShutDown once none is left.
// ShutDown stops the queue's delay goroutine and returns after it has
// exited; it does not wait for workers (see ShutDownWithDrain). It may be
// called more than once and from any goroutine.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	if !q.shuttingDown {
		q.closeIntakeLocked()
		q.shuttingDown = true
		q.stopDelaysLocked()
		q.afterShutDownChangeLocked()
	}
	done := q.delay.done
	q.mu.Unlock()
	if done != nil {
		<-done
	}
}

// ShutDownWithDrain shuts the queue down like ShutDown, then waits until
// every waiting item has been handed out and every handed-out item is Done.
// Workers must keep calling Get and Done for it to return. It returns nil
// once drained, or ctx.Err() if ctx ends first (the queue stays shut down).
func (q *Queue[T]) ShutDownWithDrain(ctx context.Context) error {
	q.ShutDown()
	select {
	case <-q.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ShuttingDown reports whether ShutDown has been called.
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}

package informer

import (
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/metrics"
)

// This file holds the per-handler delivery machinery: a listener owns one
// handler, one pending queue and the one goroutine that calls the handler.
//
// The queue has two modes. In ordered mode it is a plain FIFO of
// notifications: appending costs a lock and a slice write, and the delivery
// goroutine pops one entry at a time, sleeping on a sync.Cond only when the
// queue is empty (so a fast handler costs no wake-up per notification). When
// the pending count passes the merge threshold (the larger of the number of
// cached objects and minMergeThreshold), the queue switches to merged mode:
// every key then has at most one entry, holding the net effect of all its
// pending notifications (see fold). The queue returns to ordered mode when it
// drains. Entries keep their queue position (that of the key's oldest
// pending notification), so per-key order holds in both modes.

// minMergeThreshold is the pending count below which a listener never
// merges, however few objects are cached: merging loses intermediate states,
// which is only worth it when the backlog is large.
const minMergeThreshold = 1024

type notificationKind uint8

const (
	noNotification notificationKind = iota
	addNotification
	updateNotification
	deleteNotification
)

// notification is one call to make on a handler. The zero value is "no
// call".
type notification[T cache.Object] struct {
	kind notificationKind
	// initial is OnAdd's isInInitialList.
	initial bool
	// unknown is OnDelete's stateUnknown.
	unknown bool
	// old is the previous state, for an update.
	old T
	// obj is the new state (add, update) or the last known state (delete).
	obj T
}

// entry is one slot of a pending queue. In ordered mode only n is used. In
// merged mode an entry is the net effect of every pending notification for
// key: pre (only ever a delete) is delivered before n. An entry with neither
// is dead: the handler needs no call for that key.
type entry[T cache.Object] struct {
	key string
	// seq is the position of the oldest notification folded into this
	// entry; entries are sorted by seq. It drives per-handler sync.
	seq uint64
	pre notification[T]
	n   notification[T]
}

func (e *entry[T]) live() bool {
	return e.pre.kind != noNotification || e.n.kind != noNotification
}

// calls counts the handler calls e stands for.
func (e *entry[T]) calls() int {
	c := 0
	if e.pre.kind != noNotification {
		c++
	}
	if e.n.kind != noNotification {
		c++
	}
	return c
}

// fold merges x, the next notification for e.key, into e, so that
// delivering e leaves a handler's view of the key (present or not, and in
// which state) the same as delivering the old e and then x would:
//
//	add    + update → add of the newest state
//	add    + delete → nothing (or the earlier delete alone, after a re-create)
//	update + update → update from the oldest old state to the newest state
//	update + delete → delete of the last state
//	delete + add    → delete, then add (a re-created object keeps both calls,
//	                  so a handler sees the identity change)
//
// Other sequences cannot come from the informer (it never adds a key it
// holds or updates one it does not) and are folded as if they could.
func fold[T cache.Object](e *entry[T], x notification[T]) {
	switch e.n.kind {
	case noNotification:
		e.n = x
	case addNotification:
		switch x.kind {
		case updateNotification, addNotification:
			e.n.obj = x.obj
		case deleteNotification:
			e.n = notification[T]{}
		}
	case updateNotification:
		switch x.kind {
		case updateNotification, addNotification:
			e.n.obj = x.obj
		case deleteNotification:
			e.n = x
		}
	case deleteNotification:
		switch x.kind {
		case addNotification, updateNotification:
			e.pre = e.n
			e.n = notification[T]{kind: addNotification, initial: x.initial, obj: x.obj}
		case deleteNotification:
			e.n = x
		}
	}
}

// listener delivers notifications to one handler, on its own goroutine.
//
// Lock order: handlerSet.mu before listener.mu. Fields marked
// "handlerSet.mu" are guarded by the owning handler set's lock.
type listener[T cache.Object] struct {
	handler Handler[T]
	reg     *Registration
	clock   clock.PassiveClock
	metrics metrics.HandlerMetrics
	// timed says whether handler latency is measured at all (it costs two
	// clock reads per call).
	timed bool
	// report receives handler panics.
	report func(error)
	// cached is the number of objects in the informer's cache, maintained
	// by the informer's pop loop; it sets the merge threshold.
	cached *atomic.Int64
	// minThreshold is minMergeThreshold, lowered by tests.
	minThreshold int

	// resyncPeriod, nextResync and resyncDue drive per-handler resync
	// (handlerSet.mu).
	resyncPeriod time.Duration
	nextResync   time.Time
	resyncDue    bool

	// exited is closed when the delivery goroutine returns.
	exited chan struct{}
	// stopped is set by stop; once set no handler call starts.
	stopped atomic.Bool

	// mu guards everything below.
	mu sync.Mutex
	// wake is signalled (L is mu) when the queue gains an entry or the
	// listener stops, while the delivery goroutine waits.
	wake sync.Cond
	// waiting says the delivery goroutine sleeps on wake.
	waiting bool
	// queue[head:] is the pending queue, sorted by seq; dead counts the dead
	// entries in it, calls the handler calls its live entries stand for.
	queue []entry[T]
	head  int
	dead  int
	calls int
	// merging is the queue mode; index maps a key to its entry's position
	// in queue, in merged mode only.
	merging bool
	index   map[string]int
	// nextSeq is the seq of the next notification added.
	nextSeq uint64
	// syncSeq is the seq at which the informer's initial list ended for
	// this handler (valid when syncKnown). Once every entry before it has
	// been delivered, reg.synced is closed.
	syncSeq   uint64
	syncKnown bool
	synced    bool
	// inFlight says the delivery goroutine is calling the handler for the
	// entry with seq inFlightSeq.
	inFlight    bool
	inFlightSeq uint64
	// closed is set by stop; the delivery goroutine then returns.
	closed bool
}

func newListener[T cache.Object](h Handler[T], reg *Registration, clk clock.PassiveClock, m metrics.HandlerMetrics, timed bool, report func(error), cached *atomic.Int64) *listener[T] {
	l := &listener[T]{
		handler:      h,
		reg:          reg,
		clock:        clk,
		metrics:      m,
		timed:        timed,
		report:       report,
		cached:       cached,
		minThreshold: minMergeThreshold,
		exited:       make(chan struct{}),
	}
	l.wake.L = &l.mu
	return l
}

// add appends n for key. It never blocks on the handler.
func (l *listener[T]) add(key string, n notification[T]) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	if l.merging {
		l.mergeLocked(key, n)
	} else {
		l.appendLocked(entry[T]{key: key, seq: l.nextSeq, n: n})
		if l.calls > l.thresholdLocked() {
			l.startMergingLocked()
		}
	}
	l.nextSeq++
	l.reportBacklogLocked()
	if l.waiting {
		l.wake.Signal()
	}
	l.mu.Unlock()
}

// keyedNotification is a notification with the key it is for.
type keyedNotification[T cache.Object] struct {
	key string
	n   notification[T]
}

// addAll appends every notification of batch, in order, as add would one at
// a time, taking the lock and waking the delivery goroutine once.
func (l *listener[T]) addAll(batch []keyedNotification[T]) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	for _, kn := range batch {
		if l.merging {
			l.mergeLocked(kn.key, kn.n)
		} else {
			l.appendLocked(entry[T]{key: kn.key, seq: l.nextSeq, n: kn.n})
			if l.calls > l.thresholdLocked() {
				l.startMergingLocked()
			}
		}
		l.nextSeq++
	}
	l.reportBacklogLocked()
	if l.waiting {
		l.wake.Signal()
	}
	l.mu.Unlock()
}

// reportBacklogLocked sets the backlog gauge to the calls pending. It runs
// after every change of l.calls that a caller can observe (an add, a batch
// of adds, a dequeue, a reset, stop), so the gauge keeps moving while the
// handler is stuck in a call.
func (l *listener[T]) reportBacklogLocked() {
	l.metrics.Backlog.Set(float64(l.calls))
}

func (l *listener[T]) thresholdLocked() int {
	t := int(l.cached.Load())
	if t < l.minThreshold {
		t = l.minThreshold
	}
	return t
}

// appendLocked adds e at the tail, compacting instead of growing when at
// least half of the slice is consumed or dead, and otherwise doubling the
// slice: append alone grows a large slice by a quarter at a time, and
// while a handler lags behind an initial list of a million objects the
// arrays it leaves behind add up to about four times the largest backlog,
// garbage on a heap that holds the cache (million-rss-view of
// bench/cmd/controlplane -million).
func (l *listener[T]) appendLocked(e entry[T]) {
	if n := len(l.queue); n == cap(l.queue) && n > 0 {
		if l.head+l.dead >= n/2 {
			l.compactLocked()
		} else {
			l.queue = slices.Grow(l.queue, n)
		}
	}
	l.queue = append(l.queue, e)
	l.calls += e.calls()
	if l.merging {
		l.index[e.key] = len(l.queue) - 1
	}
}

// compactLocked moves the live entries of queue[head:] to the front.
func (l *listener[T]) compactLocked() {
	w := 0
	for r := l.head; r < len(l.queue); r++ {
		if !l.queue[r].live() {
			continue
		}
		l.queue[w] = l.queue[r]
		if l.merging {
			l.index[l.queue[w].key] = w
		}
		w++
	}
	clear(l.queue[w:])
	l.queue = l.queue[:w]
	l.head, l.dead = 0, 0
}

// mergeLocked folds n into key's pending entry, or appends a new one.
func (l *listener[T]) mergeLocked(key string, n notification[T]) {
	i, ok := l.index[key]
	if !ok {
		l.appendLocked(entry[T]{key: key, seq: l.nextSeq, n: n})
		return
	}
	e := &l.queue[i]
	l.calls -= e.calls()
	fold(e, n)
	l.calls += e.calls()
	l.metrics.Merged.Inc()
	if !e.live() {
		delete(l.index, key)
		l.dead++
	}
}

// startMergingLocked switches to merged mode, folding the pending entries
// of each key into that key's oldest one.
func (l *listener[T]) startMergingLocked() {
	l.merging = true
	if l.index == nil {
		l.index = make(map[string]int)
	}
	pending := l.queue[l.head:]
	l.queue = l.queue[:0]
	l.head, l.dead, l.calls = 0, 0, 0
	// Writing at l.queue[len] never overtakes reading at pending[r]: both
	// share one array, and the write position is at most the read one.
	for r := range pending {
		e := pending[r]
		pending[r] = entry[T]{}
		if !e.live() {
			continue
		}
		if _, ok := l.index[e.key]; ok {
			if e.pre.kind != noNotification {
				l.mergeLocked(e.key, e.pre)
			}
			if e.n.kind != noNotification {
				l.mergeLocked(e.key, e.n)
			}
			continue
		}
		l.queue = append(l.queue, e)
		l.index[e.key] = len(l.queue) - 1
		l.calls += e.calls()
	}
}

// markSynced records that the informer's initial list, as this handler
// must see it, ends with the notifications added so far.
func (l *listener[T]) markSynced() {
	l.mu.Lock()
	if !l.syncKnown {
		l.syncKnown = true
		l.syncSeq = l.nextSeq
		l.checkSyncedLocked()
	}
	l.mu.Unlock()
}

// skipDeadLocked drops the dead entries at the head of the queue.
func (l *listener[T]) skipDeadLocked() {
	for l.head < len(l.queue) && !l.queue[l.head].live() {
		l.queue[l.head] = entry[T]{}
		l.head++
		l.dead--
	}
}

// checkSyncedLocked closes reg.synced once every notification before
// syncSeq has been delivered: none is in flight and none is pending.
func (l *listener[T]) checkSyncedLocked() {
	if !l.syncKnown || l.synced {
		return
	}
	l.skipDeadLocked()
	low := l.nextSeq
	switch {
	case l.inFlight:
		low = l.inFlightSeq
	case l.head < len(l.queue):
		low = l.queue[l.head].seq
	}
	if low >= l.syncSeq {
		l.synced = true
		close(l.reg.synced)
	}
}

// stop ends delivery: no handler call starts after stop returns, pending
// notifications are dropped, and the delivery goroutine returns once the
// call in progress (if any) does.
func (l *listener[T]) stop() {
	l.stopped.Store(true)
	l.mu.Lock()
	l.closed = true
	clear(l.queue)
	l.queue, l.head, l.dead, l.calls, l.index = nil, 0, 0, 0, nil
	l.reportBacklogLocked()
	l.wake.Signal()
	l.mu.Unlock()
}

// backlog returns the number of handler calls pending.
func (l *listener[T]) backlog() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

// run is the delivery goroutine. It returns after stop.
func (l *listener[T]) run() {
	l.mu.Lock()
	for {
		l.skipDeadLocked()
		if l.closed {
			l.mu.Unlock()
			return
		}
		if l.head == len(l.queue) {
			l.checkSyncedLocked()
			l.resetLocked()
			l.reportBacklogLocked()
			l.waiting = true
			l.wake.Wait()
			l.waiting = false
			continue
		}
		e := l.queue[l.head]
		l.queue[l.head] = entry[T]{}
		l.head++
		l.calls -= e.calls()
		if l.merging {
			delete(l.index, e.key)
		}
		l.inFlight, l.inFlightSeq = true, e.seq
		l.reportBacklogLocked()
		l.mu.Unlock()

		l.deliver(e.pre)
		l.deliver(e.n)

		l.mu.Lock()
		l.inFlight = false
		l.checkSyncedLocked()
	}
}

// resetLocked returns an empty queue to ordered mode, releasing a large
// array.
func (l *listener[T]) resetLocked() {
	if cap(l.queue) > 4*minMergeThreshold {
		l.queue = nil
	} else {
		l.queue = l.queue[:0]
	}
	l.head, l.dead, l.calls = 0, 0, 0
	if l.merging {
		l.merging = false
		clear(l.index)
	}
}

// deliver makes one handler call, recovering and reporting a panic.
func (l *listener[T]) deliver(n notification[T]) {
	if n.kind == noNotification || l.stopped.Load() {
		return
	}
	var start time.Time
	if l.timed {
		start = l.clock.Now()
	}
	defer func() {
		if r := recover(); r != nil {
			l.metrics.Panics.Inc()
			l.report(&HandlerPanicError{Handler: l.reg.name, Value: r, Stack: debug.Stack()})
		}
		if l.timed {
			l.metrics.Latency.Observe(l.clock.Since(start).Seconds())
		}
	}()
	switch n.kind {
	case addNotification:
		l.handler.OnAdd(n.obj, n.initial)
	case updateNotification:
		l.handler.OnUpdate(n.old, n.obj)
	case deleteNotification:
		l.handler.OnDelete(n.obj, n.unknown)
	}
}

// HandlerPanicError reports a panic in a handler. The informer recovers it,
// reports it through its error handler and goes on delivering.
type HandlerPanicError struct {
	// Handler is the registration's name.
	Handler string
	// Value is what the handler panicked with.
	Value any
	// Stack is the handler goroutine's stack at the panic.
	Stack []byte
}

func (e *HandlerPanicError) Error() string {
	return fmt.Sprintf("handler %q panicked: %v", e.Handler, e.Value)
}

// Unwrap returns the panic value when it is an error.
func (e *HandlerPanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

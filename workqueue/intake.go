package workqueue

import (
	"sync"
	"sync/atomic"
)

// intake is a log of the plain operations (adds without a delay, at any
// priority, and Dones) that no one has applied to the queue yet, in the
// order they were made.
//
// Add and Done append to the log under the log's own lock instead of
// taking the queue's lock: whoever next takes Queue.mu applies the log
// first, in order (Queue.applyIntakeLocked). So a producer does not contend
// with the workers for every add, and a worker takes the queue's lock once
// per item (in Get, which applies its previous Done) instead of twice.
// Every operation that reads or changes the queue's items applies the log
// first, so each logged operation takes effect as if it had been applied
// when it was appended: the order of the log is the order of the
// operations, and Get, Len, ShutDown, the delayed adds and the metrics all
// see the log applied.
//
// Nothing may wait on an operation left in the log, so the caller that
// appends applies the log itself when a Get is blocked (the worker must
// not sleep while an add or a Done that would hand it an item waits here),
// when the log is full, and, for Done, when the queue is shutting down (the
// log is closed; Done is then applied at once). A Get publishes that it is
// blocked and then looks at the log once more, and an appender appends and
// then looks for blocked Gets, so one of the two always sees the other.
//
// Measured by the "workqueue" and "workqueue-sweep" scenarios of bench/.
//
// Lock order: Queue.mu, then intake.mu.
type intake[T comparable] struct {
	// mu guards buf and closed.
	mu sync.Mutex
	// buf holds the logged operations, oldest first.
	buf []op[T]
	// closed is set by ShutDown: adds are dropped from then on and Dones
	// applied at once.
	closed bool
	// n mirrors len(buf), so that the queue can see without taking mu
	// that there is nothing to apply. Written with mu held.
	n atomic.Int32
}

// op is one logged operation: an add at priority (done false) or a Done of
// item, whose hash is hash, made at at (see entryTimes; 0 unless the queue
// is observed).
type op[T any] struct {
	item     T
	hash     uint64
	at       int64
	priority int
	done     bool
}

// intakeMax is how many operations may wait in the log before the one who
// appends applies them. Larger batches take the queue's lock less often but
// hold it longer (about 30 ns per operation, more when the queue is too
// large for the CPU's caches), while the workers' Gets wait: with 16
// workers, 64 cost about a third less CPU per item than 256 (the
// "workqueue-16w" scenario), and no more elsewhere.
const intakeMax = 64

// log appends o to the intake and applies the log if it must (see intake).
// It reports false, having appended nothing, once the log is closed.
func (q *Queue[T]) log(o op[T]) bool {
	in := &q.in
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return false
	}
	in.buf = append(in.buf, o)
	n := len(in.buf)
	in.n.Store(int32(n))
	in.mu.Unlock()
	// The store above and the load below pair with Get, which publishes
	// that it is blocked and then loads n.
	if n >= intakeMax || q.blocked.Load() > 0 {
		q.mu.Lock()
		q.applyIntakeLocked()
		q.mu.Unlock()
	}
	return true
}

// applyIntakeLocked applies every logged operation, in order.
func (q *Queue[T]) applyIntakeLocked() {
	if q.in.n.Load() == 0 {
		return
	}
	in := &q.in
	in.mu.Lock()
	buf := in.buf
	in.buf = q.spare[:0]
	in.n.Store(0)
	in.mu.Unlock()
	for _, o := range buf {
		if o.done {
			q.doneLocked(o.item, o.hash, o.at)
		} else if !q.shuttingDown {
			q.addLocked(o.item, o.hash, o.priority, o.at)
		}
	}
	clear(buf) // drop the items for the garbage collector
	if cap(buf) > 4*intakeMax {
		buf = nil // a burst of concurrent appenders: do not pin it
	}
	q.spare = buf[:0]
}

// closeIntakeLocked applies the logged operations and closes the log, for
// ShutDown.
func (q *Queue[T]) closeIntakeLocked() {
	q.in.mu.Lock()
	q.in.closed = true
	q.in.mu.Unlock()
	q.applyIntakeLocked()
}

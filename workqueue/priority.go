package workqueue

import (
	"slices"
	"time"

	"github.com/kinformer/kinformer/metrics"
)

// Priorities of the adds a controller usually makes. Any int is a priority;
// higher is handed out first.
const (
	// PriorityNormal is the priority of Add: a change to act on.
	PriorityNormal = 0
	// PriorityLow is the priority [NewEnqueue]'s handler gives the adds of
	// an informer's initial list and updates that change nothing (resyncs),
	// so that after a restart real changes do not wait behind every
	// object of the cluster. It is controller-runtime's
	// handler.LowPriority.
	PriorityLow = -100
)

// AddOptions says how [Queue.AddWithOptions] adds an item. The zero value
// adds it now at PriorityNormal, as Add does.
type AddOptions struct {
	// Priority orders the waiting items: higher first, and in the order
	// they started waiting among equals. An add at a higher priority than
	// the item already waits at raises it (it then waits behind the items
	// already at the new priority); an add at the same or a lower priority
	// changes nothing.
	Priority int
	// After delays the add, as AddAfter does; zero or negative adds now.
	// A delayed add of an item already delayed keeps the earlier due time
	// and the higher priority of the two.
	After time.Duration
}

// AddWithOptions adds item as opts says. Like Add it does nothing once the
// queue is shutting down and never blocks on workers.
func (q *Queue[T]) AddWithOptions(item T, opts AddOptions) {
	if opts.After > 0 {
		q.addAfter(item, opts.After, opts.Priority, false)
		return
	}
	q.add(item, opts.Priority)
}

// line is the ready line of one priority: the items waiting at that
// priority that no worker holds, in the order they joined it.
//
// When an item waiting in a line is raised to a higher priority, it moves to
// the end of that priority's line and its old place is overwritten with
// moved, so a line's ring may hold more indices than items; it is emptied
// whenever its last item leaves. All fields are guarded by Queue.mu.
type line struct {
	priority int
	// ring holds the arena indices (in Queue.items) of the waiting items,
	// or moved for an item raised away since.
	ring ring[int32]
	// ready counts the items in ring (moved excluded).
	ready int
	// waiting counts the items waiting at this priority: ready, plus the
	// items held by a worker and added again at this priority, which join
	// the ring at Done.
	waiting int
	// latency is the priority's queue-latency histogram; used only when
	// the queue is observed.
	latency metrics.Histogram
}

// moved marks the place an item left in a line's ring when it was raised.
const moved int32 = -1

// pop removes and returns the arena index of the first item of l, which must
// have one ready.
func (l *line) pop() int32 {
	for {
		if idx := l.ring.pop(); idx != moved {
			l.ready--
			if l.ready == 0 && l.ring.len() > 0 {
				l.ring.clear() // only moved places are left
			}
			return idx
		}
	}
}

// push appends arena index idx to l and returns its position in the ring.
func (l *line) push(idx int32) uint32 {
	l.ready++
	return l.ring.push(idx)
}

// unlink takes the item at position pos out of l, for a raise.
func (l *line) unlink(pos uint32) {
	l.ready--
	if l.ready == 0 {
		l.ring.clear()
		return
	}
	l.ring.set(pos, moved)
}

// maxIdleLines is how many lines with nothing waiting a queue keeps, so that
// a controller using a few priorities never reallocates them, while one that
// uses many does not accumulate them.
const maxIdleLines = 8

// lineLocked returns the line of priority p, creating it if need be.
func (q *Queue[T]) lineLocked(p int) *line {
	// Linear: a queue has a handful of priorities, usually one or two.
	i := 0
	for ; i < len(q.lines); i++ {
		l := q.lines[i]
		if l.priority == p {
			return l
		}
		if l.priority < p {
			break
		}
	}
	l := &line{priority: p}
	if q.observed {
		l.latency = q.m.QueueLatency(p)
	}
	q.lines = slices.Insert(q.lines, i, l)
	if len(q.lines) > maxIdleLines {
		q.pruneLinesLocked(l)
	}
	return l
}

// pruneLinesLocked drops the lines with nothing waiting, except keep, when
// there are more than maxIdleLines of them.
func (q *Queue[T]) pruneLinesLocked(keep *line) {
	idle := 0
	for _, l := range q.lines {
		if l.waiting == 0 {
			idle++
		}
	}
	if idle <= maxIdleLines {
		return
	}
	q.lines = slices.DeleteFunc(q.lines, func(l *line) bool { return l.waiting == 0 && l != keep })
}

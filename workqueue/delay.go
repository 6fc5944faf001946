package workqueue

import (
	"time"

	"k8s.io/utils/clock"
)

// delays holds the adds waiting for their time, and the goroutine that makes
// them. All fields are guarded by Queue.mu.
type delays[T comparable] struct {
	// heap is a min-heap of pending adds ordered by due time.
	heap []delayed[T]
	// index maps an item to its position in heap, so a second delayed add
	// of the same item only moves it earlier.
	index map[T]int
	// wake (capacity 1) tells the loop the earliest due time moved
	// earlier. Never closed.
	wake chan struct{}
	// stop is closed by ShutDown to end the loop.
	stop chan struct{}
	// done is closed by the loop when it exits; nil until the loop starts.
	done chan struct{}
	// seq numbers delayed adds, so items due at the same time are added
	// in the order they were delayed.
	seq uint64
}

type delayed[T any] struct {
	item     T
	at       time.Time
	seq      uint64
	priority int
}

// less orders the heap by due time, then by delayed-add order.
func (dl *delays[T]) less(i, j int) bool {
	a, b := &dl.heap[i], &dl.heap[j]
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.seq < b.seq
}

// AddAfter adds item once d has passed on the queue's clock; with d <= 0 it
// adds it now. The add keeps the item's priority: the one it waits at, or
// was handed out at if a worker holds it, or was delayed at; PriorityNormal
// for an item the queue does not hold. A second delayed add of an item
// already delayed keeps the earlier due time and the higher priority. Items
// due at the same instant are added in the order of their delayed adds. It
// does nothing once the queue is shutting down.
func (q *Queue[T]) AddAfter(item T, d time.Duration) {
	q.addAfter(item, d, PriorityNormal, true)
}

// addAfter adds item at priority p after d, or at the item's own priority
// (see AddAfter) if keep is set.
func (q *Queue[T]) addAfter(item T, d time.Duration, p int, keep bool) {
	h := q.hash(item)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	q.applyIntakeLocked()
	dl := &q.delay
	if keep {
		if idx := q.items.find(item, h); idx >= 0 {
			p = q.items.at(idx).priority
		} else if i, ok := dl.index[item]; ok {
			p = dl.heap[i].priority
		}
	}
	if d <= 0 {
		q.addLocked(item, h, p, 0)
		return
	}
	at := q.clock.Now().Add(d)
	if dl.done == nil {
		dl.index = make(map[T]int)
		dl.wake = make(chan struct{}, 1)
		dl.stop = make(chan struct{})
		dl.done = make(chan struct{})
		go q.delayLoop(dl.wake, dl.stop, dl.done)
	}
	dl.seq++
	i, ok := dl.index[item]
	switch {
	case !ok:
		dl.heap = append(dl.heap, delayed[T]{item: item, at: at, seq: dl.seq, priority: p})
		i = len(dl.heap) - 1
		dl.index[item] = i
	case at.Before(dl.heap[i].at):
		dl.heap[i].at, dl.heap[i].seq = at, dl.seq
		dl.heap[i].priority = max(dl.heap[i].priority, p)
	default:
		dl.heap[i].priority = max(dl.heap[i].priority, p)
		return
	}
	if dl.up(i) == 0 {
		select {
		case dl.wake <- struct{}{}:
		default: // the loop already has a wake-up pending
		}
	}
}

// stopDelaysLocked drops the pending delayed adds and tells the loop, if it
// runs, to exit.
func (q *Queue[T]) stopDelaysLocked() {
	dl := &q.delay
	clear(dl.heap)
	dl.heap = nil
	clear(dl.index)
	if dl.stop != nil {
		close(dl.stop)
	}
}

// delayLoop adds delayed items when they are due. It is started by the
// first AddAfter with a positive delay, is owned by the queue, and exits
// when ShutDown closes stop; it closes done on exit.
func (q *Queue[T]) delayLoop(wake, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		wait, pending := q.addDue()
		var fire <-chan time.Time
		if pending {
			if timer == nil {
				timer = q.clock.NewTimer(wait)
			} else {
				// A stale tick left by a fake clock only costs one
				// extra pass through addDue.
				timer.Reset(wait)
			}
			fire = timer.C()
		}
		select {
		case <-stop:
			return
		case <-wake:
		case <-fire:
		}
	}
}

// addDue adds every delayed item that is due and reports how long until the
// next one, if any.
func (q *Queue[T]) addDue() (wait time.Duration, pending bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.applyIntakeLocked()
	dl := &q.delay
	now := q.clock.Now()
	for len(dl.heap) > 0 {
		next := dl.heap[0]
		if next.at.After(now) {
			return next.at.Sub(now), true
		}
		dl.popHead()
		if !q.shuttingDown {
			q.addLocked(next.item, q.hash(next.item), next.priority, 0)
		}
	}
	return 0, false
}

func (dl *delays[T]) swap(i, j int) {
	dl.heap[i], dl.heap[j] = dl.heap[j], dl.heap[i]
	dl.index[dl.heap[i].item] = i
	dl.index[dl.heap[j].item] = j
}

// up moves entry i towards the root until the heap is ordered and returns
// its final position.
func (dl *delays[T]) up(i int) int {
	for i > 0 {
		parent := (i - 1) / 2
		if !dl.less(i, parent) {
			break
		}
		dl.swap(i, parent)
		i = parent
	}
	return i
}

// popHead removes the earliest entry.
func (dl *delays[T]) popHead() {
	last := len(dl.heap) - 1
	dl.swap(0, last)
	delete(dl.index, dl.heap[last].item)
	dl.heap[last] = delayed[T]{}
	dl.heap = dl.heap[:last]
	// Sift the moved entry down.
	for i := 0; ; {
		small := i
		if l := 2*i + 1; l < len(dl.heap) && dl.less(l, small) {
			small = l
		}
		if r := 2*i + 2; r < len(dl.heap) && dl.less(r, small) {
			small = r
		}
		if small == i {
			return
		}
		dl.swap(i, small)
		i = small
	}
}

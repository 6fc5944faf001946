package workqueue

import (
	"time"

	"github.com/kinformer/kinformer/metrics"
)

// sample implements metrics.WorkqueueSampler for this queue: one pass over
// the tracked items, under the lock.
func (q *Queue[T]) sample() metrics.WorkqueueSample {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.applyIntakeLocked()
	now := q.now()
	var s metrics.WorkqueueSample
	oldest := make([]int64, len(q.lines)) // earliest add per line, 0 if none
	at := func(p int) int {
		for i, l := range q.lines {
			if l.priority == p {
				return i
			}
		}
		return -1 // cannot happen: a waiting item's line is never pruned
	}
	for i := range q.items.size {
		e := q.items.at(i)
		t := q.items.times[i]
		switch e.state {
		case stateFree:
			continue
		case stateHeld, stateHeldReadded:
			if t.started != 0 {
				age := time.Duration(now - t.started).Seconds()
				s.Unfinished += age
				s.Longest = max(s.Longest, age)
			}
		}
		if e.state == stateHeld || t.added == 0 {
			continue
		}
		if j := at(e.priority); j >= 0 && (oldest[j] == 0 || t.added < oldest[j]) {
			oldest[j] = t.added
		}
	}
	s.Priorities = make([]metrics.PrioritySample, len(q.lines))
	for i, l := range q.lines {
		ps := &s.Priorities[i]
		ps.Priority, ps.Depth = l.priority, l.waiting
		if oldest[i] != 0 {
			ps.Oldest = time.Duration(now - oldest[i]).Seconds()
		}
	}
	return s
}

package reflector

import (
	"math/rand/v2"
	"time"

	"k8s.io/utils/clock"
)

// backoff computes delays between failed attempts: initial, doubling up
// to max, each with up to 100% jitter added. A delay requested more than
// reset after the previous one starts over from initial: the reflector
// was healthy in between. So does the first delay after the source
// answers again following an outage (answered): the back-off built while
// it was unreachable says nothing about what comes next (typically a
// relist after "expired"). It is owned by the list-watch loop goroutine.
type backoff struct {
	initial, max, reset time.Duration
	clock               clock.PassiveClock

	next time.Duration // base of the next delay; 0 before the first
	last time.Time     // when the previous delay was requested
	// outage is set by a request that found the source unavailable, and
	// cleared by the next one it answered.
	outage bool
}

// answered records how a request to the source went: unavailable (no
// answer), or answered, with success or any other error. An answer after
// an outage starts the delays over.
func (b *backoff) answered(unavailable bool) {
	switch {
	case unavailable:
		b.outage = true
	case b.outage:
		b.outage = false
		b.next = 0
	}
}

// delay returns how long to wait before the next attempt.
func (b *backoff) delay() time.Duration {
	now := b.clock.Now()
	if b.next == 0 || now.Sub(b.last) > b.reset {
		b.next = b.initial
	}
	b.last = now
	d := b.next
	b.next = min(2*b.next, b.max)
	return d + time.Duration(rand.Float64()*float64(d))
}

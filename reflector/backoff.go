package reflector

import (
	"math/rand/v2"
	"time"

	"k8s.io/utils/clock"
)

// backoff computes delays between failed attempts: initial, doubling up
// to max, each with up to 100% jitter added. A delay requested more than
// reset after the previous one starts over from initial: the reflector
// was healthy in between. It is owned by the list-watch loop goroutine.
type backoff struct {
	initial, max, reset time.Duration
	clock               clock.PassiveClock

	next time.Duration // base of the next delay; 0 before the first
	last time.Time     // when the previous delay was requested
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

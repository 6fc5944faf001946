package informer

import (
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/metrics"
)

// lagSampler measures metrics.InformerMetrics.Lag on one change at a
// time: the reflector's next write after the previous sample is done
// starts one (start, on the reflector's goroutine), and the pop loop
// finishes it once the cache has reached the queue's mark of that write
// (reached, a mark subscriber). It costs an atomic load per write and per
// key processed; the clock is read once per sample on each side.
type lagSampler struct {
	// Set by newLagSampler, then read-only.
	queue marks
	clock clock.PassiveClock
	lag   metrics.Gauge
	// mark is 1 + the Seq of the queue's Written mark after the sampled
	// write; 0 while no sample is out. Only start sets it, only reached
	// clears it.
	mark atomic.Uint64
	// at is when the sample was taken, in Unix nanoseconds; written by
	// start before mark.
	at atomic.Int64
}

func newLagSampler(q marks, clk clock.PassiveClock, lag metrics.Gauge) *lagSampler {
	return &lagSampler{queue: q, clock: clk, lag: lag}
}

// start takes a sample of the write just queued, unless one is out.
func (s *lagSampler) start() {
	if s.mark.Load() != 0 {
		return
	}
	s.at.Store(s.clock.Now().UnixNano())
	s.mark.Store(s.queue.Written().Seq + 1)
}

// reached reports the sample's lag once the cache has reached m.
func (s *lagSampler) reached(m cache.Mark) {
	at := s.mark.Load()
	if at == 0 || m.Seq < at-1 {
		return
	}
	s.lag.Set(s.clock.Since(time.Unix(0, s.at.Load())).Seconds())
	s.mark.Store(0)
}

package informer

import (
	"sync"
	"sync/atomic"

	"github.com/kinformer/kinformer/cache"
)

// marks is what the sync point and the lag sampler read of the delta
// queue (a *cache.DeltaFIFO): the mark of what was written to it, and the
// mark its consumer, the cache, has reached.
type marks interface {
	Written() cache.Mark
	Reached() cache.Mark
}

// syncPoint is when an informer has synced: the reflector has confirmed
// that what it queued reflects the server (its Confirmed: after the first
// list, or once a checkpoint is confirmed or relisted over), and the cache
// has reached the queue's mark of that moment. The reflector's goroutine
// (confirm) and the pop loop (reached) both check, each after its own
// step, so neither misses the other. After a checkpoint whose version
// expired, the relist's differences are queued behind the checkpoint's
// objects, and the sync point waits for them too.
type syncPoint struct {
	// onSynced, when set (before Run), runs once, before ch is closed.
	onSynced func()
	// ch is closed once synced.
	ch   chan struct{}
	once sync.Once
	// at is 0 until confirmed, then 1 + the Seq of the queue's Written
	// mark at the confirmation.
	at atomic.Uint64
}

func newSyncPoint() *syncPoint { return &syncPoint{ch: make(chan struct{})} }

// confirm is the reflector's Confirmed.
func (s *syncPoint) confirm(q marks) {
	s.at.Store(q.Written().Seq + 1)
	s.reached(q.Reached())
}

// reached is told the mark the cache has reached (a mark subscriber of
// the cache writer).
func (s *syncPoint) reached(m cache.Mark) {
	if at := s.at.Load(); at != 0 && m.Seq >= at-1 {
		s.once.Do(func() {
			if s.onSynced != nil {
				s.onSynced()
			}
			close(s.ch)
		})
	}
}

// done reports whether the informer has synced.
func (s *syncPoint) done() bool {
	select {
	case <-s.ch:
		return true
	default:
		return false
	}
}

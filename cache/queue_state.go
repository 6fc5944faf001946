package cache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// queueState is the bookkeeping FIFO and DeltaFIFO share: the lock, closing,
// waking a waiting Pop, serializing Pops, and HasSynced. The queue that
// embeds it keeps its own content under mu.
type queueState struct {
	// synced mirrors populated && initialCount == 0 for lock-free reads.
	synced atomic.Bool
	// notify (capacity 1) wakes a waiting Pop; senders never block. It is
	// sent to when a key is queued or a Pop finishes while Pops wait.
	notify chan struct{}
	// done is closed by the first Close.
	done chan struct{}

	mu sync.Mutex // guards the fields below and the embedding queue's content
	// populated is set by the first successful write; initialCount counts
	// the entries queued by the first Replace (when that was the first
	// write) that are not yet processed.
	populated    bool
	initialCount int
	// popping is set while a Pop runs its process function.
	popping bool
	// waiters counts Pops waiting for notify.
	waiters int
	closed  bool
}

func newQueueState() queueState {
	return queueState{notify: make(chan struct{}, 1), done: make(chan struct{})}
}

// waitTurnLocked is called with mu held and returns with it held. It waits
// until no other Pop is processing and ready reports an item, and returns
// nil then; or an error matching ErrClosed, or ctx.Err().
func (s *queueState) waitTurnLocked(ctx context.Context, ready func() bool) error {
	for {
		if s.closed {
			return fmt.Errorf("cache: pop: %w", ErrClosed)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !s.popping && ready() {
			s.popping = true
			return nil
		}
		s.waiters++
		s.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-s.notify:
		case <-s.done:
		}
		s.mu.Lock()
		s.waiters--
	}
}

// endTurnLocked ends a Pop's processing; more says whether items remain,
// in which case a waiting Pop is woken.
func (s *queueState) endTurnLocked(more bool) {
	s.popping = false
	if more {
		s.signalLocked()
	}
}

// signalLocked wakes a waiting Pop, if any.
func (s *queueState) signalLocked() {
	if s.waiters == 0 {
		return
	}
	select {
	case s.notify <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// writableLocked fails with ErrClosed once the queue is closed, and
// otherwise records that the queue has been written to. A write other than
// Replace coming first leaves no initial list to wait for, so HasSynced
// turns true at once.
func (s *queueState) writableLocked(op string) error {
	if s.closed {
		return fmt.Errorf("cache: %s: %w", op, ErrClosed)
	}
	if !s.populated {
		s.populated = true
		s.synced.Store(s.initialCount == 0)
	}
	return nil
}

// setInitialLocked records that the first write was a Replace that queued
// n entries.
func (s *queueState) setInitialLocked(n int) {
	s.populated = true
	s.initialCount = n
	s.synced.Store(n == 0)
}

// initialDoneLocked records that one initial entry has been processed.
func (s *queueState) initialDoneLocked() {
	s.initialCount--
	s.synced.Store(s.populated && s.initialCount == 0)
}

// HasSynced reports whether the first Replace has been fully processed:
// every entry it queued has been popped and processed (not re-queued). If
// the first write was not a Replace, there is no initial list to wait for
// and HasSynced is true from that write on. It is false before any write.
func (s *queueState) HasSynced() bool { return s.synced.Load() }

// Close closes the queue: waiting and later Pops return an error matching
// ErrClosed, and so do later writes. Entries still queued are not
// processed. Close may be called more than once.
func (s *queueState) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

// IsClosed reports whether Close has been called.
func (s *queueState) IsClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

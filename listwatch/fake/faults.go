package fake

import (
	"fmt"
	"io"
	"time"

	"github.com/kinformer/kinformer/listwatch"
)

// Faults. Each plays back something a real kube-apiserver (or the network
// in front of it) does; none of them loses a change silently, so a client
// that follows the list-and-watch rules always converges on the truth.

// RefuseNext makes the next n List or Watch calls fail with
// listwatch.ErrUnavailable, as a refused connection does.
func (s *Source[T]) RefuseNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseNext = n
}

// RefuseFor makes every List and Watch call fail with
// listwatch.ErrUnavailable for d, measured on the source's clock.
func (s *Source[T]) RefuseFor(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseUntilSet = true
	s.refuseUntil = s.clock.Now().Add(d).UnixNano()
}

// ResetWatches breaks every open watch as a reset connection does: events
// not yet read are lost and Next returns an error wrapping
// listwatch.ErrUnavailable. A client resumes from the last version it
// read.
func (s *Source[T]) ResetWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		s.stats.Resets++
		w.endLocked(item[T]{err: fmt.Errorf("read fake: connection reset by peer: %w", listwatch.ErrUnavailable)})
	}
}

// CloseWatches ends every open watch cleanly, as a server timeout does:
// events not yet read are lost and Next returns io.EOF.
func (s *Source[T]) CloseWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		s.stats.Closes++
		w.endLocked(item[T]{err: io.EOF})
	}
}

// CloseNextWatches makes the next n watches end at once, before any event:
// Next returns io.EOF straight away.
func (s *Source[T]) CloseNextWatches(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeNext = n
}

// DropNextEvent makes every open watch lose its next change. Real servers
// never drop an event and carry on as if nothing happened; what they do
// is fall behind and end the watch with 410 Gone. The fake plays that:
// after the gap the watch delivers at most one more change and then an
// Error event with listwatch.ErrExpired, and sends that Error event as
// soon as it has nothing else to deliver. A client that relists on it
// heals the gap; one that ignored it would diverge.
func (s *Source[T]) DropNextEvent() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		if !w.ending && !w.gap {
			w.dropNext = true
		}
	}
}

// SendError queues an Error event carrying err on every open watch, after
// the events already queued; the watch ends after it.
func (s *Source[T]) SendError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		if w.ending {
			continue
		}
		s.stats.ErrorEvents++
		w.pushLocked(item[T]{ev: listwatch.Event[T]{Type: listwatch.Error, Err: err}})
		w.ending = true
	}
}

// InjectWrongType queues, on every open watch, an event whose object the
// decoder could not turn into T: Next returns a *listwatch.DecodeError
// describing got, and the stream goes on. The event is extra: no change
// is lost with it.
func (s *Source[T]) InjectWrongType(got string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		if w.ending {
			continue
		}
		s.stats.WrongTypes++
		w.pushLocked(item[T]{decode: true, err: &listwatch.DecodeError{Type: listwatch.Added, Got: got}})
	}
}

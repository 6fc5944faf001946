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
//
// RefuseNext, RefuseFor and CloseNextWatches aim at calls still to come.
// ResetWatches, CloseWatches, DropNextEvent, SendError and InjectWrongType
// aim at open watches: each goes to every open watch that can take it,
// which is one still streaming (nothing queued on it ends it yet; for a
// drop, no drop pending on it either). When no open watch can take such a
// fault (none is open, or every one is already ending) the source holds
// it, at most one of each kind, and the next watch opened that can take it
// does, as if the fault were fired just after that watch opened: after its
// initial or replayed events. Held faults go out in the order fired; one
// that ends that watch leaves the ones after it for the watch after. A
// refused call, a watch closed by CloseNextWatches and a watch from a
// compacted version take none. So a test may fire a fault while its
// client is between watches and still see it played.

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
// read. With no watch to take it, the reset is held: the next watch
// opened breaks at once.
func (s *Source[T]) ResetWatches() { s.fire(fault{kind: faultReset}) }

// CloseWatches ends every open watch cleanly, as a server timeout does:
// events not yet read are lost and Next returns io.EOF. With no watch to
// take it, the close is held: the next watch opened ends at once.
func (s *Source[T]) CloseWatches() { s.fire(fault{kind: faultClose}) }

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
// soon as it has nothing else to deliver, waking a reader blocked in Next
// when the dropped change is the last one. A client that relists on it
// heals the gap; one that ignored it would diverge. With no watch to take
// it, the drop is held: the next watch opened loses its first live change.
func (s *Source[T]) DropNextEvent() { s.fire(fault{kind: faultDrop}) }

// SendError queues an Error event carrying err on every open watch, after
// the events already queued; the watch ends after it. With no watch to
// take it, the event is held for the next watch opened.
func (s *Source[T]) SendError(err error) { s.fire(fault{kind: faultError, err: err}) }

// InjectWrongType queues, on every open watch, an event whose object the
// decoder could not turn into T: Next returns a *listwatch.DecodeError
// describing got, and the stream goes on. The event is extra: no change
// is lost with it. With no watch to take it, the event is held for the
// next watch opened.
func (s *Source[T]) InjectWrongType(got string) { s.fire(fault{kind: faultWrongType, got: got}) }

// faultKind names a fault aimed at open watches.
type faultKind int

const (
	faultReset faultKind = iota
	faultClose
	faultDrop
	faultError
	faultWrongType
)

// fault is one fault aimed at open watches.
type fault struct {
	kind faultKind
	err  error  // the Error event's error, for faultError
	got  string // what the bad event carried, for faultWrongType
}

// fire applies f to every open watch that can take it, or holds it for
// the next watch opened when none could.
func (s *Source[T]) fire(f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	taken := false
	for w := range s.watches {
		if s.applyLocked(w, f) {
			taken = true
		}
	}
	if taken {
		return
	}
	for _, h := range s.held {
		if h.kind == f.kind {
			return // one of each kind is held at most
		}
	}
	s.held = append(s.held, f)
}

// takeHeldLocked gives w, a watch just opened, the held faults in the
// order fired, stopping at the first it cannot take (because an earlier
// one ended it).
func (s *Source[T]) takeHeldLocked(w *watch[T]) {
	n := 0
	for n < len(s.held) && s.applyLocked(w, s.held[n]) {
		n++
	}
	s.held = append(s.held[:0], s.held[n:]...)
}

// applyLocked applies f to w and counts it in the stats. It reports false,
// changing nothing, when w cannot take f: w is closed or already ending,
// or, for a drop, has a drop pending or a gap it owes an Error event for.
func (s *Source[T]) applyLocked(w *watch[T], f fault) bool {
	if w.closed || w.ending || (f.kind == faultDrop && (w.dropNext || w.gap)) {
		return false
	}
	switch f.kind {
	case faultReset:
		s.stats.Resets++
		w.endLocked(item[T]{err: fmt.Errorf("read fake: connection reset by peer: %w", listwatch.ErrUnavailable)})
	case faultClose:
		s.stats.Closes++
		w.endLocked(item[T]{err: io.EOF})
	case faultDrop:
		w.dropNext = true // counted in Stats.Drops when a change is dropped
	case faultError:
		s.stats.ErrorEvents++
		w.pushLocked(item[T]{ev: listwatch.Event[T]{Type: listwatch.Error, Err: f.err}})
		w.ending = true
	case faultWrongType:
		s.stats.WrongTypes++
		w.pushLocked(item[T]{decode: true, err: &listwatch.DecodeError{Type: listwatch.Added, Got: f.got}})
	}
	return true
}

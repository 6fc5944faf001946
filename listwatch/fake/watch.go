package fake

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/listwatch"
)

// Watch opens a stream. Resource-version rules, as kube-apiserver:
//   - SendInitialEvents (needs AllowBookmarks): an Added event per object
//     of the current state, then a Bookmark with InitialEventsEnd at the
//     current version, then changes. A version newer than the current one
//     is ErrTooLargeResourceVersion. With StreamingListUnsupported the call
//     fails with listwatch.ErrStreamingListUnsupported.
//   - "" or "0": an Added event per object of the current state, then
//     changes.
//   - N: every change after N, then live changes. A version newer than the
//     current one is ErrTooLargeResourceVersion; one older than the
//     compaction point opens a stream whose only event is an Error event
//     with listwatch.ErrExpired (what kube-apiserver sends).
//
// The stream ends (Next returns io.EOF) after TimeoutSeconds on the
// source's clock, when ctx is done, or when closed.
func (s *Source[T]) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[T], error) {
	if err := s.admit(ctx, opts, true); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &watch[T]{src: s, opts: opts, done: ctx.Done(), wake: make(chan struct{}, 1)}
	if opts.SendInitialEvents {
		if s.opts.StreamingListUnsupported {
			return nil, fmt.Errorf("watch with initial events: %w", listwatch.ErrStreamingListUnsupported)
		}
		if !opts.AllowBookmarks {
			return nil, fmt.Errorf("initial events without bookmarks: %w", ErrInvalid)
		}
		if opts.ResourceVersion != "" {
			if _, err := s.parseVersionLocked(opts.ResourceVersion); err != nil {
				return nil, err
			}
		}
		s.initialEventsLocked(w)
		w.queue = append(w.queue, item[T]{ev: s.bookmarkLocked(true)})
	} else {
		switch opts.ResourceVersion {
		case "", "0":
			s.initialEventsLocked(w)
		default:
			n, err := s.parseVersionLocked(opts.ResourceVersion)
			if err != nil {
				return nil, err
			}
			if n < s.base {
				s.stats.Expired++
				w.queue = append(w.queue, item[T]{ev: listwatch.Event[T]{
					Type: listwatch.Error,
					Err:  fmt.Errorf("watch from %d, compacted at %d: %w", n, s.base, listwatch.ErrExpired),
				}})
				w.ending = true
				break
			}
			for _, c := range s.log[n-s.base:] {
				w.deliverLocked(c)
			}
		}
	}
	if s.closeNext > 0 {
		s.closeNext--
		s.stats.EarlyCloses++
		w.queue = nil
		w.closed = true
		return w, nil
	}
	s.takeHeldLocked(w)
	if opts.TimeoutSeconds > 0 {
		w.timer = s.clock.NewTimer(time.Duration(opts.TimeoutSeconds) * time.Second)
	}
	s.watches[w] = struct{}{}
	return w, nil
}

func (s *Source[T]) initialEventsLocked(w *watch[T]) {
	for _, obj := range s.sortedLocked(s.objects, "", &w.opts) {
		w.queue = append(w.queue, item[T]{ev: listwatch.Event[T]{
			Type: listwatch.Added, Object: obj, ResourceVersion: obj.GetResourceVersion(),
		}})
	}
}

// item is one queued result of Next.
type item[T Object] struct {
	ev  listwatch.Event[T]
	err error // when set, Next returns it; ends the stream unless decode is set
	// decode marks a per-event *listwatch.DecodeError: the stream goes on.
	decode bool
}

// watch is one open stream. Every field but the immutable ones is guarded
// by src.mu.
type watch[T Object] struct {
	src  *Source[T]
	opts listwatch.Options
	// done is the Watch caller's ctx.Done(); Next ends the stream on it.
	done <-chan struct{}
	// wake has room for one signal, sent (without blocking) whenever queue
	// grows, a change is dropped (gap set) or the watch closes; only Next
	// receives from it.
	wake  chan struct{}
	timer clock.Timer // nil without TimeoutSeconds; stopped by Close

	queue []item[T]
	// ending: the queue ends with an item that ends the stream (an Error
	// event or a broken stream); nothing more is queued.
	ending bool
	closed bool // Next returns io.EOF
	// dropNext: skip the next change. gap: a change was skipped and the
	// stream now owes an Error event with ErrExpired, sent after at most
	// one more change or as soon as the queue runs dry.
	dropNext, gap bool
}

// deliverLocked queues the event c means for this watch, if any.
func (w *watch[T]) deliverLocked(c change[T]) {
	if w.ending || w.closed {
		return
	}
	typ := c.typ
	if w.src.opts.Filter != nil {
		now := c.typ != listwatch.Deleted && w.src.opts.Filter(c.obj, w.opts)
		before := c.hadPrev && w.src.opts.Filter(c.prev, w.opts)
		switch {
		case !now && !before:
			return
		case now && !before:
			typ = listwatch.Added
		case !now && before:
			typ = listwatch.Deleted
		}
	}
	if w.dropNext {
		w.dropNext = false
		w.gap = true
		w.src.stats.Drops++
		// Wake a reader blocked on an empty queue: Next owes it the Error
		// event now, since the dropped change may be the last one.
		w.signal()
		return
	}
	w.pushLocked(item[T]{ev: listwatch.Event[T]{Type: typ, Object: c.obj, ResourceVersion: strconv.FormatInt(c.rv, 10)}})
	if w.gap {
		w.owe410Locked()
	}
}

func (w *watch[T]) owe410Locked() {
	w.gap = false
	w.src.stats.Expired++
	w.pushLocked(item[T]{ev: listwatch.Event[T]{
		Type: listwatch.Error,
		Err:  fmt.Errorf("watch fell behind after a dropped event: %w", listwatch.ErrExpired),
	}})
	w.ending = true
}

func (w *watch[T]) pushLocked(it item[T]) {
	if w.ending || w.closed {
		return
	}
	w.queue = append(w.queue, it)
	w.signal()
}

// endLocked replaces whatever is queued with one final item.
func (w *watch[T]) endLocked(last item[T]) {
	if w.closed {
		return
	}
	w.queue = []item[T]{last}
	w.ending = true
	w.gap, w.dropNext = false, false
	w.signal()
}

func (w *watch[T]) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Next returns the next queued event, waiting for one. It returns io.EOF
// once the stream has ended.
func (w *watch[T]) Next() (listwatch.Event[T], error) {
	for {
		select {
		case <-w.done:
			w.Close()
		default:
		}
		w.src.mu.Lock()
		if w.gap && len(w.queue) == 0 {
			w.owe410Locked()
		}
		if len(w.queue) > 0 && !w.closed {
			it := w.queue[0]
			w.queue[0] = item[T]{}
			w.queue = w.queue[1:]
			ends := (it.err != nil && !it.decode) || it.ev.Type == listwatch.Error
			if ends {
				w.closeLocked()
			}
			if it.err == nil {
				w.src.stats.Events++
			}
			w.src.mu.Unlock()
			return it.ev, it.err
		}
		if w.closed {
			w.src.mu.Unlock()
			return listwatch.Event[T]{}, io.EOF
		}
		w.src.mu.Unlock()
		var timeout <-chan time.Time
		if w.timer != nil {
			timeout = w.timer.C()
		}
		select {
		case <-w.wake:
		case <-w.done:
			w.Close()
		case <-timeout:
			w.Close()
		}
	}
}

// Close ends the stream; a pending Next returns io.EOF.
func (w *watch[T]) Close() error {
	w.src.mu.Lock()
	defer w.src.mu.Unlock()
	w.closeLocked()
	return nil
}

func (w *watch[T]) closeLocked() {
	if w.closed {
		return
	}
	w.closed = true
	w.queue = nil
	if w.timer != nil {
		w.timer.Stop()
	}
	delete(w.src.watches, w)
	w.signal()
}

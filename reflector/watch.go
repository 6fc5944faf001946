package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
)

// veryShortWatch: a watch that ends cleanly sooner than this having
// delivered nothing is treated as a failure.
const veryShortWatch = time.Second

// watch is the stateWatch step: open a watch at the last version (unless
// w is a stream already open, asked for with timeout), apply its events
// until it ends, and decide what comes next. A guard closes the watch
// when nothing comes through it past its timeout plus the bookmark
// interval.
func (r *Reflector[T]) watch(ctx context.Context, w listwatch.Watch[T], timeout time.Duration) state[T] {
	if w == nil {
		var opts listwatch.Options
		opts.ResourceVersion = r.LastSyncResourceVersion()
		opts.AllowBookmarks = true
		opts.TimeoutSeconds = r.watchTimeout()
		timeout = time.Duration(opts.TimeoutSeconds) * time.Second
		var err error
		w, err = r.src.Watch(ctx, opts)
		if err != nil {
			if ctx.Err() != nil {
				return state[T]{kind: stateWatch}
			}
			r.answered(err)
			r.m.WatchErrors.Inc()
			r.report(listwatch.PhaseWatchStart, fmt.Errorf("watch from %q: %w", opts.ResourceVersion, err))
			return afterWatchFailure[T](err)
		}
		r.answered(nil)
	}
	defer w.Close()
	guard := guardWatch(w, r.clock, timeout+r.bookmarks)
	defer guard.stop()
	r.m.Watches.Inc()
	start := r.clock.Now()
	events := 0
	defer func() { r.m.WatchDuration.Observe(r.clock.Since(start).Seconds()) }()
	for {
		ev, err := w.Next()
		guard.seen()
		if errors.Is(err, listwatch.ErrWrongType) {
			r.m.Skipped.Inc()
			r.report(listwatch.PhaseWatchStream, fmt.Errorf("skipping event: %w", err))
			continue
		}
		if ctx.Err() != nil {
			return state[T]{kind: stateWatch}
		}
		if err == io.EOF {
			if guard.stop() {
				r.m.StalledWatches.Inc()
				r.progress.stalled()
				r.report(listwatch.PhaseWatchStream, fmt.Errorf("%w (%s), reopening at %q",
					ErrWatchStalled, timeout+r.bookmarks, r.LastSyncResourceVersion()))
				return state[T]{kind: stateWatch}
			}
			if events == 0 && r.clock.Since(start) < veryShortWatch {
				r.m.ShortWatches.Inc()
				r.report(listwatch.PhaseWatchStream, ErrVeryShortWatch)
				return state[T]{kind: stateList, backoff: true}
			}
			return state[T]{kind: stateWatch}
		}
		if err != nil {
			r.answered(err)
			r.m.WatchErrors.Inc()
			r.report(listwatch.PhaseWatchStream, err)
			return afterWatchFailure[T](err)
		}
		events++
		r.countEvent(ev.Type)
		switch ev.Type {
		case listwatch.Added, listwatch.Modified, listwatch.Deleted:
			r.apply(ev)
		case listwatch.Bookmark:
			if ev.ResourceVersion != "" {
				r.store.Bookmark(ev.ResourceVersion)
				r.setLastRV(ev.ResourceVersion)
			}
		case listwatch.Error:
			r.failed(ev.Err)
			r.m.WatchErrors.Inc()
			r.report(listwatch.PhaseWatchStream, fmt.Errorf("error event: %w", ev.Err))
			return afterWatchFailure[T](ev.Err)
		default:
			r.report(listwatch.PhaseWatchStream, fmt.Errorf("%w %q", ErrUnknownEventType, ev.Type))
		}
	}
}

// answered records how a request to the source went: succeeded (err
// nil), answered with an error, or not answered (ErrUnavailable). The
// back-off, the shared Server and the failure metrics learn it.
func (r *Reflector[T]) answered(err error) {
	unavailable := errors.Is(err, listwatch.ErrUnavailable)
	r.backoff.answered(unavailable)
	if r.server != nil {
		if unavailable {
			r.server.unreachable()
		} else {
			r.server.answered()
		}
	}
	switch {
	case err == nil:
		r.earlyWake = true
	case r.wokenEarly:
		// An early try that failed: this reflector waits out its own
		// back-off until a request succeeds, so a server answering with
		// errors is not sent a burst at every wake.
		r.earlyWake = false
	}
	r.wokenEarly = false
	r.failed(err)
}

// failed counts err (nil: a success) in the failure metrics, by reason,
// and sets the Failing gauge to the latest reason.
func (r *Reflector[T]) failed(err error) {
	reason := ""
	if err != nil {
		reason = failureReason(err)
		r.m.Failures(reason).Inc()
	}
	if reason == r.failing {
		return
	}
	if r.failing != "" {
		r.m.Failing(r.failing).Set(0)
	}
	if reason != "" {
		r.m.Failing(reason).Set(1)
	}
	r.failing = reason
}

// countEvent counts one watch event by type.
func (r *Reflector[T]) countEvent(t listwatch.EventType) {
	switch t {
	case listwatch.Added:
		r.m.AddedEvents.Inc()
	case listwatch.Modified:
		r.m.ModifiedEvents.Inc()
	case listwatch.Deleted:
		r.m.DeletedEvents.Inc()
	case listwatch.Bookmark:
		r.m.BookmarkEvents.Inc()
	case listwatch.Error:
		r.m.ErrorEvents.Inc()
	}
}

// afterWatchFailure: an unavailable source is waited out and watched
// again; any other failure (expired included) is followed by a relist at
// the last version seen.
func afterWatchFailure[T cache.Object](err error) state[T] {
	if errors.Is(err, listwatch.ErrUnavailable) {
		return state[T]{kind: stateWatch, backoff: true}
	}
	return state[T]{kind: stateList, backoff: true}
}

// apply writes one change to the store. The version advances even when
// the object is skipped: the source will not send it again.
func (r *Reflector[T]) apply(ev listwatch.Event[T]) {
	if ev.ResourceVersion != "" {
		defer r.setLastRV(ev.ResourceVersion)
	}
	if isNil(ev.Object) {
		r.m.Skipped.Inc()
		r.report(listwatch.PhaseWatchStream, fmt.Errorf("skipping %s: %w", ev.Type, ErrNilObject))
		return
	}
	if ev.ResourceVersion == "" {
		if rv := ev.Object.GetResourceVersion(); rv != "" {
			defer r.setLastRV(rv)
		}
	}
	var err error
	switch ev.Type {
	case listwatch.Added:
		err = r.store.Add(ev.Object)
	case listwatch.Modified:
		err = r.store.Update(ev.Object)
	case listwatch.Deleted:
		err = r.store.Delete(ev.Object)
	}
	if err != nil {
		// The store refused the object (a DeltaFIFO: its key or Transform
		// failed); the event is dropped.
		r.m.Skipped.Inc()
		r.report(listwatch.PhaseWatchStream, fmt.Errorf("skipping %s of %s: store: %w",
			ev.Type, describe(ev.Object), err))
	}
}

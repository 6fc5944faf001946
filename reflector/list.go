package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/kinformer/kinformer/cache"

	"github.com/kinformer/kinformer/listwatch"
)

// relistVersion is the version the next list asks for: "0" before any
// list, "" after the source said the last one is unavailable, otherwise
// the last version seen.
func (r *Reflector[T]) relistVersion() string {
	if r.rvUnavailable {
		return ""
	}
	if rv := r.LastSyncResourceVersion(); rv != "" {
		return rv
	}
	return "0"
}

// versionUnavailable reports the errors after which a list must not ask
// for the same version again.
func versionUnavailable(err error) bool {
	return errors.Is(err, listwatch.ErrExpired) || errors.Is(err, listwatch.ErrTooLargeResourceVersion)
}

// list is the stateList step: fill the store, then watch.
func (r *Reflector[T]) list(ctx context.Context) state[T] {
	if r.streaming == StreamingOn || (r.streaming == StreamingAuto && !r.streamingBroken) {
		w, timeout, err := r.streamList(ctx)
		if err == nil {
			return state[T]{kind: stateWatch, stream: w, timeout: timeout}
		}
		if ctx.Err() != nil {
			return state[T]{kind: stateList}
		}
		if r.streaming == StreamingAuto &&
			(errors.Is(err, listwatch.ErrStreamingListUnsupported) || errors.Is(err, ErrInitialEventsTimeout)) {
			r.streamingBroken = true
		}
		// Fall back to a plain list: making progress beats insisting.
		r.progress.fellBack(err.Error())
	}
	return r.plainList(ctx)
}

// pageSizeFor applies the page-size rules to a list at rv.
func (r *Reflector[T]) pageSizeFor(rv string) int64 {
	switch {
	case r.pageSize < 0:
		return 0
	case r.pageSize > 0:
		return r.pageSize
	case rv != "" && rv != "0" && !r.paginated:
		// Unpaged, a list at a version can be served from the server's
		// watch cache instead of storage.
		return 0
	}
	return DefaultPageSize
}

// plainList lists (paged), replaces the store and moves on to watch.
func (r *Reflector[T]) plainList(ctx context.Context) state[T] {
	retry := state[T]{kind: stateList, backoff: true}
	start := r.clock.Now()
	filled := false
	r.progress.begin(ListPaged, start)
	defer func() {
		r.progress.end(filled, r.clock.Now())
		r.m.PagedLists.Duration.Observe(r.clock.Since(start).Seconds())
	}()
	var opts listwatch.Options
	opts.ResourceVersion = r.relistVersion()
	r.m.PagedLists.Attempts.Inc()
	pages := countingLister[T]{r}
	l := r.beginRelist()
	first := true
	visit := func(page listwatch.Page[T], restart bool) error {
		if restart {
			l.restart()
		}
		if (first || restart) && page.ResourceVersion == "" {
			// The version a list is served at is its first page's:
			// without one, nothing of it can be placed.
			return fmt.Errorf("list at %q: %w", opts.ResourceVersion, ErrMissingResourceVersion)
		}
		first = false
		return l.add(r.withoutNil(page.Items))
	}
	res, err := listwatch.ListPages(ctx, pages, opts, r.pageSizeFor(opts.ResourceVersion), visit)
	if err != nil && versionUnavailable(err) && opts.ResourceVersion != "" && ctx.Err() == nil {
		r.report(listwatch.PhaseList, fmt.Errorf("list at %q, retrying at \"\": %w", opts.ResourceVersion, err))
		r.m.PagedLists.Errors.Inc()
		r.rvUnavailable = true
		opts.ResourceVersion = ""
		r.m.PagedLists.Attempts.Inc()
		l.restart()
		first = true
		res, err = listwatch.ListPages(ctx, pages, opts, r.pageSizeFor(""), visit)
	}
	if ctx.Err() == nil {
		if errors.Is(err, ErrMissingResourceVersion) {
			r.answered(nil) // the server did answer
		} else {
			r.answered(err)
		}
	}
	if err != nil {
		l.abort()
		r.m.PagedLists.Errors.Inc()
		if ctx.Err() == nil {
			if errors.Is(err, ErrMissingResourceVersion) {
				r.report(listwatch.PhaseList, err)
				return retry
			}
			r.report(listwatch.PhaseList, fmt.Errorf("list at %q: %w", opts.ResourceVersion, err))
			if versionUnavailable(err) {
				r.rvUnavailable = true
			}
		}
		return retry
	}
	if opts.ResourceVersion == "0" && res.Paginated {
		r.paginated = true
	}
	stored, err := l.finish(res.ResourceVersion)
	if err != nil {
		r.m.PagedLists.Errors.Inc()
		r.report(listwatch.PhaseList, err)
		return retry
	}
	r.listed(&r.m.PagedLists, &r.m.StreamingLists, stored)
	r.setLastRV(res.ResourceVersion)
	r.rvUnavailable = false
	filled = true
	r.confirm()
	return state[T]{kind: stateWatch}
}

// countingLister is the reflector's source for paged lists: it records
// each page in the reflector's progress.
type countingLister[T cache.Object] struct{ r *Reflector[T] }

func (c countingLister[T]) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[T], error) {
	page, err := c.r.src.List(ctx, opts)
	if err == nil {
		c.r.progress.page(len(page.Items), page.Bytes, page.RemainingItemCount)
	}
	return page, err
}

// streamList fills the store from a watch with initial events and returns
// that watch, positioned after the initial-events-end bookmark, and the
// timeout it was opened with. A guard closes the stream when no initial
// event (an add) has come for InitialEventsTimeout
// (ErrInitialEventsTimeout): a list of a million objects takes minutes,
// and is not stalled while its objects keep coming. Adds that follow a
// change are not initial events (see live) and do not count.
// Errors come back tagged with their phase, already reported.
func (r *Reflector[T]) streamList(ctx context.Context) (_ listwatch.Watch[T], timeout time.Duration, _ error) {
	var opts listwatch.Options
	opts.SendInitialEvents = true
	opts.AllowBookmarks = true
	opts.ResourceVersionMatch = listwatch.MatchNotOlderThan
	if !r.rvUnavailable {
		opts.ResourceVersion = r.LastSyncResourceVersion()
	}
	opts.TimeoutSeconds = r.watchTimeout()
	timeout = time.Duration(opts.TimeoutSeconds) * time.Second
	r.m.StreamingLists.Attempts.Inc()
	start := r.clock.Now()
	filled := false
	r.progress.begin(ListStreaming, start)
	defer func() {
		r.progress.end(filled, r.clock.Now())
		r.m.StreamingLists.Duration.Observe(r.clock.Since(start).Seconds())
	}()
	w, err := r.src.Watch(ctx, opts)
	if err != nil {
		return nil, 0, r.streamFailed(ctx, listwatch.PhaseWatchStart, err)
	}
	r.answered(nil)
	guard := &stallGuard{}
	if r.initialEvents > 0 {
		guard = guardWatch(w, r.clock, r.initialEvents)
	}
	defer guard.stop()
	l := r.beginRelist()
	// live: a change (Modified or Deleted) came before the end bookmark. A
	// source sends its initial events, all adds, before that bookmark and
	// changes only after it, so the bookmark was lost on the way (a proxy
	// dropped it) and the adds from here on are objects being created:
	// they must not keep the guard from seeing the initial events end.
	live := false
	fail := func(phase listwatch.Phase, err error) (listwatch.Watch[T], time.Duration, error) {
		l.abort()
		w.Close()
		if guard.stop() {
			err = fmt.Errorf("streaming list: %w (no new object for %s)", ErrInitialEventsTimeout, r.initialEvents)
		}
		return nil, 0, r.streamFailed(ctx, phase, err)
	}
	for {
		ev, err := w.Next()
		if errors.Is(err, listwatch.ErrWrongType) {
			r.m.Skipped.Inc()
			r.report(listwatch.PhaseWatchStream, fmt.Errorf("streaming list: skipping event: %w", err))
			continue
		}
		if err == io.EOF {
			err = ErrInitialEventsIncomplete
		}
		if err != nil {
			if ctx.Err() == nil {
				r.answered(err)
			}
			return fail(listwatch.PhaseWatchStream, fmt.Errorf("streaming list: %w", err))
		}
		switch ev.Type {
		case listwatch.Added, listwatch.Modified, listwatch.Deleted:
			if ev.Type != listwatch.Added {
				live = true
			} else if !live {
				guard.seen()
			}
			r.progress.object(ev.Bytes)
			var key string // what update and delete need; an add only needs it valid
			var err error
			if ev.Type == listwatch.Added {
				err = r.checkKey(ev.Object)
			} else {
				key, err = validKey(r.keyFunc, ev.Object)
			}
			if err != nil {
				r.m.Skipped.Inc()
				r.report(listwatch.PhaseWatchStream, fmt.Errorf("streaming list: skipping %s of %s: key: %w",
					ev.Type, describe(ev.Object), err))
				continue
			}
			switch ev.Type {
			case listwatch.Added:
				err = l.addOne(ev.Object)
			case listwatch.Modified:
				err = l.update(key, ev.Object)
			default:
				err = l.delete(key, ev.Object)
			}
			if err != nil {
				return fail(listwatch.PhaseList, err)
			}
		case listwatch.Bookmark:
			if !ev.InitialEventsEnd {
				continue
			}
			if ev.ResourceVersion == "" {
				return fail(listwatch.PhaseWatchStream, fmt.Errorf("streaming list: %w", ErrMissingResourceVersion))
			}
			guard.stop() // if it fired just now, the watch step finds the stream closed and reopens it
			stored, err := l.finish(ev.ResourceVersion)
			if err != nil {
				return fail(listwatch.PhaseList, err)
			}
			r.listed(&r.m.StreamingLists, &r.m.PagedLists, stored)
			r.setLastRV(ev.ResourceVersion)
			r.rvUnavailable = false
			filled = true
			r.confirm()
			return w, timeout, nil
		case listwatch.Error:
			return fail(listwatch.PhaseWatchStream, fmt.Errorf("streaming list: error event: %w", ev.Err))
		default:
			r.report(listwatch.PhaseWatchStream, fmt.Errorf("streaming list: %w %q", ErrUnknownEventType, ev.Type))
		}
	}
}

// withoutNil returns items without the nil objects a buggy source could
// list (each reported and counted as skipped): items itself when there are
// none. Every other check of an object is the store's (see replace).
func (r *Reflector[T]) withoutNil(items []T) []T {
	for i, obj := range items {
		if !isNil(obj) {
			continue
		}
		kept := slices.Clone(items[:i])
		for _, obj := range items[i:] {
			if isNil(obj) {
				r.m.Skipped.Inc()
				r.report(listwatch.PhaseList, fmt.Errorf("skipping listed object: %w", ErrNilObject))
				continue
			}
			kept = append(kept, obj)
		}
		return kept
	}
	return items
}

// replace replaces the store's content with a list's items and returns
// how many of them it stored. A store that skips items it cannot use (a
// DeltaFIFO whose Transform or key function fails on them) and says so
// with an error wrapping cache.ErrSkipped has applied the rest: the
// skipped items are reported, in PhaseList, and counted in Skipped, and
// the list stands. Any other error fails the list; it is returned, not
// reported.
func (r *Reflector[T]) replace(items []T, rv string) (int, error) {
	err := r.store.Replace(items, rv)
	if err == nil {
		return len(items), nil
	}
	err = fmt.Errorf("replace store at %s: %w", rv, err)
	if !errors.Is(err, cache.ErrSkipped) {
		return 0, err
	}
	return max(len(items)-r.skipped(err), 0), nil
}

// skipped reports, in PhaseList, and counts in Skipped the items a store
// skipped (err wraps cache.ErrSkipped), and returns how many they are.
func (r *Reflector[T]) skipped(err error) int {
	n := 1 // a store that does not say how many
	var se *cache.SkippedError
	if errors.As(err, &se) {
		n = len(se.Errs)
	}
	for range n {
		r.m.Skipped.Inc()
	}
	r.report(listwatch.PhaseList, err)
	return n
}

// streamFailed reports a failed streaming list (unless ctx ended) and
// notes when the version asked for is unavailable.
func (r *Reflector[T]) streamFailed(ctx context.Context, phase listwatch.Phase, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.m.StreamingLists.Errors.Inc()
	if versionUnavailable(err) {
		r.rvUnavailable = true
	}
	if r.streaming == StreamingAuto && errors.Is(err, listwatch.ErrStreamingListUnsupported) {
		// Expected of a server without streaming lists (before
		// Kubernetes 1.34, or the WatchList gate off): list instead, as
		// client-go does, without an error for anyone to act on.
		slog.Debug("kinformer reflector: streaming list refused, listing instead", "reflector", r.name, "err", err)
		return err
	}
	r.report(phase, err)
	return err
}

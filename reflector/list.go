package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

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
		w, err := r.streamList(ctx)
		if err == nil {
			return state[T]{kind: stateWatch, stream: w}
		}
		if ctx.Err() != nil {
			return state[T]{kind: stateList}
		}
		if errors.Is(err, listwatch.ErrStreamingListUnsupported) && r.streaming == StreamingAuto {
			r.streamingBroken = true
		}
		// Fall back to a plain list: making progress beats insisting.
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
	defer func() { r.m.PagedLists.Duration.Observe(r.clock.Since(start).Seconds()) }()
	var opts listwatch.Options
	opts.ResourceVersion = r.relistVersion()
	r.m.PagedLists.Attempts.Inc()
	res, err := listwatch.ListAll(ctx, r.src, opts, r.pageSizeFor(opts.ResourceVersion))
	if err != nil && versionUnavailable(err) && opts.ResourceVersion != "" && ctx.Err() == nil {
		r.report(listwatch.PhaseList, fmt.Errorf("list at %q, retrying at \"\": %w", opts.ResourceVersion, err))
		r.m.PagedLists.Errors.Inc()
		r.rvUnavailable = true
		opts.ResourceVersion = ""
		r.m.PagedLists.Attempts.Inc()
		res, err = listwatch.ListAll(ctx, r.src, opts, r.pageSizeFor(""))
	}
	if err != nil {
		r.m.PagedLists.Errors.Inc()
		if ctx.Err() == nil {
			r.report(listwatch.PhaseList, fmt.Errorf("list at %q: %w", opts.ResourceVersion, err))
			if versionUnavailable(err) {
				r.rvUnavailable = true
			}
		}
		return retry
	}
	if res.ResourceVersion == "" {
		r.m.PagedLists.Errors.Inc()
		r.report(listwatch.PhaseList, fmt.Errorf("list at %q: %w", opts.ResourceVersion, ErrMissingResourceVersion))
		return retry
	}
	if opts.ResourceVersion == "0" && res.Paginated {
		r.paginated = true
	}
	stored, err := r.replace(r.withoutNil(res.Items), res.ResourceVersion)
	if err != nil {
		r.m.PagedLists.Errors.Inc()
		r.report(listwatch.PhaseList, err)
		return retry
	}
	r.listed(&r.m.PagedLists, &r.m.StreamingLists, stored)
	r.setLastRV(res.ResourceVersion)
	r.rvUnavailable = false
	return state[T]{kind: stateWatch}
}

// streamList fills the store from a watch with initial events and returns
// that watch, positioned after the initial-events-end bookmark. Errors
// come back tagged with their phase, already reported.
func (r *Reflector[T]) streamList(ctx context.Context) (listwatch.Watch[T], error) {
	var opts listwatch.Options
	opts.SendInitialEvents = true
	opts.AllowBookmarks = true
	opts.ResourceVersionMatch = listwatch.MatchNotOlderThan
	if !r.rvUnavailable {
		opts.ResourceVersion = r.LastSyncResourceVersion()
	}
	opts.TimeoutSeconds = r.watchTimeout()
	r.m.StreamingLists.Attempts.Inc()
	start := r.clock.Now()
	defer func() { r.m.StreamingLists.Duration.Observe(r.clock.Since(start).Seconds()) }()
	w, err := r.src.Watch(ctx, opts)
	if err != nil {
		return nil, r.streamFailed(ctx, listwatch.PhaseWatchStart, err)
	}
	objs := map[string]T{}
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
			w.Close()
			return nil, r.streamFailed(ctx, listwatch.PhaseWatchStream, fmt.Errorf("streaming list: %w", err))
		}
		switch ev.Type {
		case listwatch.Added, listwatch.Modified, listwatch.Deleted:
			key, err := validKey(r.keyFunc, ev.Object)
			if err != nil {
				r.m.Skipped.Inc()
				r.report(listwatch.PhaseWatchStream, fmt.Errorf("streaming list: skipping %s of %s: key: %w",
					ev.Type, describe(ev.Object), err))
				continue
			}
			if ev.Type == listwatch.Deleted {
				delete(objs, key)
			} else {
				objs[key] = ev.Object
			}
		case listwatch.Bookmark:
			if !ev.InitialEventsEnd {
				continue
			}
			if ev.ResourceVersion == "" {
				w.Close()
				return nil, r.streamFailed(ctx, listwatch.PhaseWatchStream, fmt.Errorf("streaming list: %w", ErrMissingResourceVersion))
			}
			items := make([]T, 0, len(objs))
			for _, obj := range objs {
				items = append(items, obj)
			}
			stored, err := r.replace(items, ev.ResourceVersion)
			if err != nil {
				w.Close()
				return nil, r.streamFailed(ctx, listwatch.PhaseList, err)
			}
			r.listed(&r.m.StreamingLists, &r.m.PagedLists, stored)
			r.setLastRV(ev.ResourceVersion)
			r.rvUnavailable = false
			return w, nil
		case listwatch.Error:
			w.Close()
			return nil, r.streamFailed(ctx, listwatch.PhaseWatchStream, fmt.Errorf("streaming list: error event: %w", ev.Err))
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
	skipped := 1 // a store that does not say how many
	var se *cache.SkippedError
	if errors.As(err, &se) {
		skipped = len(se.Errs)
	}
	for range skipped {
		r.m.Skipped.Inc()
	}
	r.report(listwatch.PhaseList, err)
	return max(len(items)-skipped, 0), nil
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
	r.report(phase, err)
	return err
}

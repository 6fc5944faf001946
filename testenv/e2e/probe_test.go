package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
)

// errCut is what a watch cut by probe.pause reports: the connection is
// gone, as if the network had dropped it.
var errCut = fmt.Errorf("probe: watch cut: %w", listwatch.ErrUnavailable)

// listCall records one List call and its answer.
type listCall struct {
	opts  listwatch.Options
	items int
	cont  string
	rv    string
	err   error
}

// probe wraps a real source: it records what the reflector asks and what
// the server answers, can refuse streaming lists, and can hold every new
// list and watch back (pause) until resume, cutting the open watches.
// The data always comes from the server.
type probe[T cache.Object] struct {
	inner listwatch.ListerWatcher[T]
	// noStreaming refuses watches with SendInitialEvents, so the reflector
	// falls back to paged lists.
	noStreaming bool
	// consistentLists turns lists at resource version "0" (any cached
	// version) into consistent reads (""), which the apiserver serves from
	// etcd, page by page: its watch cache answers a list at "0" whole,
	// whatever the limit.
	consistentLists bool
	// watchTimeout, when positive, replaces every watch's TimeoutSeconds
	// (the apiserver sends a bookmark two seconds before a watch's end).
	watchTimeout int64

	// mu guards the fields below.
	mu        sync.Mutex
	lists     []listCall
	watches   []listwatch.Options
	watchErrs []error
	// bookmarks are the versions of the bookmarks received, in order.
	bookmarks []string
	// initialEnds are the versions of the bookmarks ending a streaming list.
	initialEnds []string
	// open are the watches not closed yet.
	open map[*probeWatch[T]]struct{}
	// paused is non-nil while paused; resume closes it.
	paused chan struct{}
}

func newProbe[T cache.Object](inner listwatch.ListerWatcher[T]) *probe[T] {
	return &probe[T]{inner: inner, open: make(map[*probeWatch[T]]struct{})}
}

// pause cuts every open watch and holds new calls back until resume.
func (p *probe[T]) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == nil {
		p.paused = make(chan struct{})
	}
	for w := range p.open {
		w.cut = true
		w.inner.Close() // unblocks the reflector's Next
	}
}

// resume lets held calls through.
func (p *probe[T]) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused != nil {
		close(p.paused)
		p.paused = nil
	}
}

// wait blocks while the probe is paused.
func (p *probe[T]) wait(ctx context.Context) error {
	for {
		p.mu.Lock()
		ch := p.paused
		p.mu.Unlock()
		if ch == nil {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *probe[T]) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[T], error) {
	if err := p.wait(ctx); err != nil {
		return listwatch.Page[T]{}, err
	}
	if p.consistentLists && opts.ResourceVersion == "0" {
		opts.ResourceVersion = ""
	}
	page, err := p.inner.List(ctx, opts)
	p.mu.Lock()
	p.lists = append(p.lists, listCall{opts: opts, items: len(page.Items), cont: page.Continue, rv: page.ResourceVersion, err: err})
	p.mu.Unlock()
	return page, err
}

func (p *probe[T]) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[T], error) {
	if p.noStreaming && opts.SendInitialEvents {
		return nil, fmt.Errorf("probe: %w", listwatch.ErrStreamingListUnsupported)
	}
	if err := p.wait(ctx); err != nil {
		return nil, err
	}
	if p.watchTimeout > 0 && !opts.SendInitialEvents {
		opts.TimeoutSeconds = p.watchTimeout
	}
	w, err := p.inner.Watch(ctx, opts)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watches = append(p.watches, opts)
	if err != nil {
		p.watchErrs = append(p.watchErrs, err)
		return nil, err
	}
	if p.paused != nil { // paused while the watch was being opened
		w.Close()
		return nil, errCut
	}
	pw := &probeWatch[T]{p: p, inner: w}
	p.open[pw] = struct{}{}
	return pw, nil
}

// snapshot returns copies of what the probe recorded.
func (p *probe[T]) snapshot() (lists []listCall, watches []listwatch.Options, watchErrs []error, bookmarks []string, initialEnds []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]listCall(nil), p.lists...), append([]listwatch.Options(nil), p.watches...),
		append([]error(nil), p.watchErrs...), append([]string(nil), p.bookmarks...), append([]string(nil), p.initialEnds...)
}

// openWatches counts the watches open now.
func (p *probe[T]) openWatches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.open)
}

// sawExpired reports whether a watch failed with 410 Gone, when it was
// opened or by an error event.
func (p *probe[T]) sawExpired() bool {
	_, _, errs, _, _ := p.snapshot()
	for _, err := range errs {
		if errors.Is(err, listwatch.ErrExpired) {
			return true
		}
	}
	return false
}

// probeWatch records the events of one watch.
type probeWatch[T cache.Object] struct {
	p     *probe[T]
	inner listwatch.Watch[T]
	// cut is set (under p.mu) by pause.
	cut bool
}

func (w *probeWatch[T]) Next() (listwatch.Event[T], error) {
	ev, err := w.inner.Next()
	p := w.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if w.cut {
			err = errCut
		} else if err != io.EOF && !errors.Is(err, listwatch.ErrWrongType) {
			p.watchErrs = append(p.watchErrs, err)
		}
		return ev, err
	}
	switch ev.Type {
	case listwatch.Bookmark:
		p.bookmarks = append(p.bookmarks, ev.ResourceVersion)
		if ev.InitialEventsEnd {
			p.initialEnds = append(p.initialEnds, ev.ResourceVersion)
		}
	case listwatch.Error:
		p.watchErrs = append(p.watchErrs, ev.Err)
	}
	return ev, nil
}

func (w *probeWatch[T]) Close() error {
	w.p.mu.Lock()
	delete(w.p.open, w)
	w.p.mu.Unlock()
	return w.inner.Close()
}

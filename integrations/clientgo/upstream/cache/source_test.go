package cache

// fromClientGo serves a client-go ListerWatcher (the test's
// FakeControllerSource) to kinformer's reflector: the one piece of the
// kinformer side's construction the test does not name, since client-go's
// constructor takes a client-go ListerWatcher.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
)

func fromClientGo[T cache.Object](lw toolscache.ListerWatcher) listwatch.ListerWatcher[T] {
	return source[T]{lw: toolscache.ToListerWatcherWithContext(lw), unsupported: watchlist.DoesClientNotSupportWatchListSemantics(lw)}
}

type source[T cache.Object] struct {
	lw toolscache.ListerWatcherWithContext
	// unsupported: lw says it cannot serve streaming lists.
	unsupported bool
}

func metaOptions(o listwatch.Options) metav1.ListOptions {
	out := metav1.ListOptions{
		ResourceVersion:      o.ResourceVersion,
		ResourceVersionMatch: metav1.ResourceVersionMatch(o.ResourceVersionMatch),
		LabelSelector:        o.LabelSelector,
		FieldSelector:        o.FieldSelector,
		Limit:                o.Limit,
		Continue:             o.Continue,
		AllowWatchBookmarks:  o.AllowBookmarks,
	}
	if o.TimeoutSeconds != 0 {
		out.TimeoutSeconds = &o.TimeoutSeconds
	}
	if o.SendInitialEvents {
		out.SendInitialEvents = &o.SendInitialEvents
	}
	return out
}

// kinformerError maps an API error onto listwatch's errors, keeping it in
// the chain.
func kinformerError(err error) error {
	switch {
	case apierrors.IsResourceExpired(err), apierrors.IsGone(err):
		return fmt.Errorf("%w: %w", listwatch.ErrExpired, err)
	}
	return err
}

func (s source[T]) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[T], error) {
	obj, err := s.lw.ListWithContext(ctx, metaOptions(opts))
	if err != nil {
		return listwatch.Page[T]{}, kinformerError(err)
	}
	lm, err := meta.ListAccessor(obj)
	if err != nil {
		return listwatch.Page[T]{}, err
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		return listwatch.Page[T]{}, err
	}
	page := listwatch.Page[T]{ResourceVersion: lm.GetResourceVersion(), Continue: lm.GetContinue()}
	for _, item := range items {
		t, ok := item.(T)
		if !ok {
			return listwatch.Page[T]{}, fmt.Errorf("list item %T: %w", item, listwatch.ErrWrongType)
		}
		page.Items = append(page.Items, t)
	}
	return page, nil
}

// Watch opens lw's watch. A streaming list lw cannot serve (it says so, or
// its watch fails: FakeControllerSource refuses a watch from version "") is
// refused as a server without the WatchList feature refuses it.
func (s source[T]) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[T], error) {
	if opts.SendInitialEvents && s.unsupported {
		return nil, listwatch.ErrStreamingListUnsupported
	}
	w, err := s.lw.WatchWithContext(ctx, metaOptions(opts))
	if err != nil {
		if opts.SendInitialEvents {
			return nil, fmt.Errorf("%w: %w", listwatch.ErrStreamingListUnsupported, err)
		}
		return nil, kinformerError(err)
	}
	cw := &clientGoWatch[T]{w: w}
	cw.unhook = context.AfterFunc(ctx, cw.stop)
	return cw, nil
}

// clientGoWatch reads a client-go watch. It has no goroutine: Next reads
// the result channel, which Stop (Close, or the end of the Watch's context)
// closes.
type clientGoWatch[T cache.Object] struct {
	w      watch.Interface
	unhook func() bool
	once   sync.Once
}

func (c *clientGoWatch[T]) stop() { c.once.Do(c.w.Stop) }

func (c *clientGoWatch[T]) Close() error {
	c.unhook()
	c.stop()
	return nil
}

func (c *clientGoWatch[T]) Next() (listwatch.Event[T], error) {
	ev, ok := <-c.w.ResultChan()
	if !ok {
		return listwatch.Event[T]{}, io.EOF
	}
	if ev.Type == watch.Error {
		err := apierrors.FromObject(ev.Object)
		return listwatch.Event[T]{Type: listwatch.Error, Err: kinformerError(err)}, nil
	}
	obj, ok := ev.Object.(T)
	if !ok {
		return listwatch.Event[T]{}, fmt.Errorf("%s event carried %T: %w", ev.Type, ev.Object, listwatch.ErrWrongType)
	}
	out := listwatch.Event[T]{Object: obj, ResourceVersion: obj.GetResourceVersion()}
	switch ev.Type {
	case watch.Added:
		out.Type = listwatch.Added
	case watch.Modified:
		out.Type = listwatch.Modified
	case watch.Deleted:
		out.Type = listwatch.Deleted
	case watch.Bookmark:
		out.Type = listwatch.Bookmark
		m, err := meta.Accessor(obj)
		out.InitialEventsEnd = err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
	default:
		return listwatch.Event[T]{}, errors.New("unknown watch event type " + string(ev.Type))
	}
	return out, nil
}

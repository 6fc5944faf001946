package controllerruntime

import (
	"context"
	"fmt"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
)

// mapSource is a source of B made from a source of A, converting every
// listed and watched object (bookmarks included, which carry only a resource
// version). An object that does not convert fails its list, or is reported by
// the watch as a *listwatch.DecodeError, which skips that event alone.
type mapSource[A, B cache.Object] struct {
	src     listwatch.ListerWatcher[A]
	convert func(A) (B, error)
}

func (m mapSource[A, B]) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[B], error) {
	page, err := m.src.List(ctx, opts)
	if err != nil {
		return listwatch.Page[B]{}, err
	}
	out := listwatch.Page[B]{
		Items:              make([]B, 0, len(page.Items)),
		ResourceVersion:    page.ResourceVersion,
		Continue:           page.Continue,
		RemainingItemCount: page.RemainingItemCount,
	}
	for _, a := range page.Items {
		b, err := m.convert(a)
		if err != nil {
			return listwatch.Page[B]{}, err
		}
		out.Items = append(out.Items, b)
	}
	return out, nil
}

func (m mapSource[A, B]) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[B], error) {
	w, err := m.src.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return mapWatch[A, B]{w: w, convert: m.convert}, nil
}

type mapWatch[A, B cache.Object] struct {
	w       listwatch.Watch[A]
	convert func(A) (B, error)
}

func (m mapWatch[A, B]) Close() error { return m.w.Close() }

func (m mapWatch[A, B]) Next() (listwatch.Event[B], error) {
	ev, err := m.w.Next()
	if err != nil {
		return listwatch.Event[B]{}, err
	}
	out := listwatch.Event[B]{Type: ev.Type, ResourceVersion: ev.ResourceVersion, InitialEventsEnd: ev.InitialEventsEnd, Err: ev.Err}
	if ev.Type == listwatch.Error {
		return out, nil
	}
	if out.Object, err = m.convert(ev.Object); err != nil {
		return listwatch.Event[B]{}, &listwatch.DecodeError{Type: ev.Type, Got: fmt.Sprintf("%T", ev.Object), Err: err}
	}
	return out, nil
}

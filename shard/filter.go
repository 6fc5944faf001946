package shard

import (
	"context"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/objutil"
	"github.com/kinformer/kinformer/listwatch"
)

// Member is an object a Set can place: every Kubernetes object.
type Member interface {
	cache.Object
	Object
}

// Filter returns src restricted to set on the client side: list pages and
// watch events keep only the objects set contains (bookmarks and errors
// pass). Every object still comes from src, so Filter saves the memory of
// the objects it drops, not the work of fetching and decoding them. A kube
// source does better on its own (kube.SourceOptions.Shard): it asks the
// server to filter and filters itself only when the server does not.
//
// The zero set returns src itself.
func Filter[T Member](src listwatch.ListerWatcher[T], set Set) listwatch.ListerWatcher[T] {
	if set.IsZero() {
		return src
	}
	return &filtered[T]{src: src, set: set}
}

type filtered[T Member] struct {
	src listwatch.ListerWatcher[T]
	set Set
}

func (f *filtered[T]) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[T], error) {
	page, err := f.src.List(ctx, opts)
	if err != nil {
		return page, err
	}
	page.Items = FilterItems(page.Items, f.set)
	return page, nil
}

func (f *filtered[T]) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[T], error) {
	w, err := f.src.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &filteredWatch[T]{Watch: w, set: f.set}, nil
}

// FilterItems keeps, in place, the items set contains, and returns the
// shortened slice. The slots past its end are cleared, so dropped objects
// can be collected.
func FilterItems[T Member](items []T, set Set) []T {
	if set.IsZero() {
		return items
	}
	kept := items[:0]
	for _, o := range items {
		if objutil.IsNil(o) || set.Contains(o) { // nil: left for the reflector to report
			kept = append(kept, o)
		}
	}
	clear(items[len(kept):])
	return kept
}

type filteredWatch[T Member] struct {
	listwatch.Watch[T]
	set Set
}

// Next skips the Added, Modified and Deleted events of objects outside the
// set.
func (w *filteredWatch[T]) Next() (listwatch.Event[T], error) {
	for {
		ev, err := w.Watch.Next()
		if err != nil || !KeepEvent(ev, w.set) {
			if err != nil {
				return ev, err
			}
			continue
		}
		return ev, nil
	}
}

// KeepEvent reports whether a watch event belongs to set: bookmarks and
// errors always do, changes when set contains their object (or carry
// none, which is the reflector's to report).
func KeepEvent[T Member](ev listwatch.Event[T], set Set) bool {
	switch ev.Type {
	case listwatch.Added, listwatch.Modified, listwatch.Deleted:
		return objutil.IsNil(ev.Object) || set.Contains(ev.Object)
	}
	return true
}

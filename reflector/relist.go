package reflector

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kinformer/kinformer/cache"
)

// relist is a list being applied as it arrives: through the store's
// relist session (cache.Writer.BeginRelist), or, when the store takes this
// list whole (a first list), gathered for one Replace at the end. Either way
// the reflector handles it the same: add items as they come, delete a key
// a streaming list reports deleted, restart when the items so far are void,
// then finish at the list's version or abort.
type relist[T cache.Object] struct {
	r       *Reflector[T]
	session cache.RelistSession[T] // nil: gathering for Replace
	items   []T                    // gathered, without a session
	applied int                    // items applied through the session
	skipped int                    // of which the store skipped
	// one holds the object addOne hands the session: a streaming list
	// applies its objects one event at a time, and a slice made per
	// event would be garbage per listed object (a session keeps no
	// slice it is given).
	one [1]T
}

// beginRelist starts applying a list.
func (r *Reflector[T]) beginRelist() *relist[T] {
	l := &relist[T]{r: r}
	if s, ok := r.store.BeginRelist(); ok {
		l.session = s
	}
	return l
}

// add takes listed items (nil ones already left out).
func (l *relist[T]) add(items []T) error {
	if l.session == nil {
		l.gather(items...)
		return nil
	}
	if len(items) == 0 {
		return nil
	}
	l.applied += len(items)
	err := l.session.Apply(items)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("relist: %w", err)
	if !errors.Is(err, cache.ErrSkipped) {
		return err
	}
	l.skipped += l.r.skipped(err)
	return nil
}

// addOne takes one listed object (a streaming list's ADDED event).
func (l *relist[T]) addOne(obj T) error {
	if l.session == nil {
		l.gather(obj)
		return nil
	}
	l.one[0] = obj
	err := l.add(l.one[:])
	var zero T
	l.one[0] = zero
	return err
}

// gather appends items to the list gathered for Replace, doubling its
// array when full. append alone grows a large slice by a quarter at a
// time, which leaves about four times the final array behind as garbage
// over a list of a million objects; doubling leaves about one.
func (l *relist[T]) gather(items ...T) {
	if len(l.items)+len(items) > cap(l.items) {
		l.items = slices.Grow(l.items, max(len(l.items), len(items), 256))
	}
	l.items = append(l.items, items...)
}

// update takes a listed object that may replace one listed before under
// the same key (a streaming list's MODIFIED event, which the apiserver
// does not send among initial events).
func (l *relist[T]) update(key string, obj T) error {
	if l.session == nil {
		l.items = append(deleteKey(l.items, l.r.keyFunc, key), obj)
		return nil
	}
	return l.add([]T{obj})
}

// delete takes the deletion of the object under key, seen while listing.
func (l *relist[T]) delete(key string, obj T) error {
	if l.session != nil {
		if err := l.session.Delete(obj); err != nil {
			return fmt.Errorf("relist: %w", err)
		}
		return nil
	}
	l.items = deleteKey(l.items, l.r.keyFunc, key)
	return nil
}

// restart drops what was listed so far: a new list starts over.
func (l *relist[T]) restart() {
	if l.session == nil {
		l.items = nil
		return
	}
	l.session.Abort()
	*l = *l.r.beginRelist()
}

// finish ends the list at rv and returns how many listed objects the
// store holds from it. Its errors are the store's, as replace's are.
func (l *relist[T]) finish(rv string) (int, error) {
	if l.session == nil {
		return l.r.replace(l.items, rv)
	}
	if err := l.session.Finish(rv); err != nil {
		return 0, fmt.Errorf("finish relist at %s: %w", rv, err)
	}
	return l.applied - l.skipped, nil
}

// abort ends a list that failed; what a session applied stays.
func (l *relist[T]) abort() {
	if l.session != nil {
		l.session.Abort()
	}
}

// deleteKey removes the items under key. Only a streaming list that
// reports a deletion among its initial events needs it, which the
// apiserver never does, so a scan is fine.
func deleteKey[T cache.Object](items []T, keyFunc cache.KeyFunc[T], key string) []T {
	out := items[:0]
	for _, obj := range items {
		if k, err := keyFunc(obj); err == nil && k == key {
			continue
		}
		out = append(out, obj)
	}
	return out
}

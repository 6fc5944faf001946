package clientgo

import (
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
)

// Indexer is a read-only client-go cache.Indexer over a kinformer informer's
// cache, as GetIndexer returns it. Reads answer from the live cache; every
// write but AddIndexers fails with an error matching ErrReadOnly, and
// Bookmark panics (see the package doc). Returned objects are shared and
// must not be mutated; returned slices belong to the caller.
type Indexer[T cache.Object] struct {
	inf     *informer.Shared[T]
	keyFunc cache.KeyFunc[T]
}

var _ toolscache.Indexer = (*Indexer[cache.Object])(nil)

func (x *Indexer[T]) readOnly(op string) error {
	return fmt.Errorf("%s on the cache of informer %s: %w", op, x.inf.Name(), ErrReadOnly)
}

// Add fails with ErrReadOnly.
func (x *Indexer[T]) Add(any) error { return x.readOnly("Add") }

// Update fails with ErrReadOnly.
func (x *Indexer[T]) Update(any) error { return x.readOnly("Update") }

// Delete fails with ErrReadOnly.
func (x *Indexer[T]) Delete(any) error { return x.readOnly("Delete") }

// Replace fails with ErrReadOnly.
func (x *Indexer[T]) Replace([]any, string) error { return x.readOnly("Replace") }

// Resync does nothing and returns nil, as client-go's informer cache does.
func (x *Indexer[T]) Resync() error { return nil }

// Bookmark panics: only a reflector calls it, and this cache has its own.
func (x *Indexer[T]) Bookmark(string) {
	panic(x.readOnly("Bookmark").Error() + ": it must not be given to a reflector")
}

// LastStoreSyncResourceVersion returns the resource version the cache is at.
func (x *Indexer[T]) LastStoreSyncResourceVersion() string {
	return x.inf.LastSyncResourceVersion()
}

// List returns every cached object.
func (x *Indexer[T]) List() []any { return toAny(x.inf.Cache().List()) }

// ListKeys returns every cached key.
func (x *Indexer[T]) ListKeys() []string { return x.inf.Cache().ListKeys() }

// Get returns the object cached under obj's key (client-go's
// DeletionHandlingMetaNamespaceKeyFunc, which is how the cache is keyed).
func (x *Indexer[T]) Get(obj any) (item any, exists bool, err error) {
	key, err := x.keyOf(obj)
	if err != nil {
		return nil, false, toolscache.KeyError{Obj: obj, Err: err}
	}
	return x.GetByKey(key)
}

// GetByKey returns the object cached under key.
func (x *Indexer[T]) GetByKey(key string) (item any, exists bool, err error) {
	obj, ok, err := x.inf.Cache().GetByKey(key)
	if err != nil || !ok {
		return nil, false, err
	}
	return obj, true, nil
}

// Index returns the cached objects sharing a value of the named index with
// obj, which must be a T.
func (x *Indexer[T]) Index(indexName string, obj any) ([]any, error) {
	t, ok := obj.(T)
	if !ok {
		return nil, fmt.Errorf("Index %q: object of type %T, want %T", indexName, obj, t)
	}
	objs, err := x.inf.Cache().Index(indexName, t)
	if err != nil {
		return nil, err
	}
	return toAny(objs), nil
}

// IndexKeys returns the keys of the objects indexed under value.
func (x *Indexer[T]) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return x.inf.Cache().IndexKeys(indexName, indexedValue)
}

// ListIndexFuncValues returns every value the named index holds.
func (x *Indexer[T]) ListIndexFuncValues(indexName string) []string {
	return x.inf.Cache().ListIndexFuncValues(indexName)
}

// ByIndex returns the objects indexed under value.
func (x *Indexer[T]) ByIndex(indexName, indexedValue string) ([]any, error) {
	objs, err := x.inf.Cache().ByIndex(indexName, indexedValue)
	if err != nil {
		return nil, err
	}
	return toAny(objs), nil
}

// GetIndexers returns the cache's index functions, as client-go functions
// (each fails on an object that is not a T).
func (x *Indexer[T]) GetIndexers() toolscache.Indexers {
	in := x.inf.Cache().GetIndexers()
	out := make(toolscache.Indexers, len(in))
	for name, f := range in {
		out[name] = func(obj any) ([]string, error) {
			t, ok := obj.(T)
			if !ok {
				return nil, fmt.Errorf("index %q: object of type %T, want %T", name, obj, t)
			}
			return f(t)
		}
	}
	return out
}

// AddIndexers adds indexes to the informer's cache: the one write allowed,
// as client-go allows it on a running informer.
func (x *Indexer[T]) AddIndexers(newIndexers toolscache.Indexers) error {
	return x.inf.AddIndexers(fromClientGoIndexers[T](newIndexers))
}

func (x *Indexer[T]) keyOf(obj any) (string, error) {
	if t, ok := obj.(T); ok {
		return x.keyFunc(t)
	}
	return toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj)
}

// fromClientGoIndexers turns client-go index functions into kinformer ones.
func fromClientGoIndexers[T cache.Object](in toolscache.Indexers) cache.Indexers[T] {
	out := make(cache.Indexers[T], len(in))
	for name, f := range in {
		out[name] = func(obj T) ([]string, error) { return f(obj) }
	}
	return out
}

func toAny[T any](objs []T) []any {
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

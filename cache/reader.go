package cache

import "fmt"

// Reader is a read-only view of an Indexer: every read method, no write
// method. It is what an informer hands its users, so that the compiler,
// not a comment, keeps everyone but the informer from writing to its
// cache. It is a small value (copy it freely) that reads the indexer's
// current content on every call; it is safe for concurrent use. Get one
// from Indexer.Reader. The zero Reader reads as empty.
//
// Returned objects are shared with the cache and every other reader: they
// must not be mutated (copy them first). Returned slices belong to the
// caller.
type Reader[T Object] struct {
	s *Indexer[T]
}

// Get returns the object stored under obj's key.
func (r Reader[T]) Get(obj T) (item T, exists bool, err error) {
	if r.s == nil {
		return item, false, nil
	}
	return r.s.Get(obj)
}

// GetByKey returns the object stored under key.
func (r Reader[T]) GetByKey(key string) (item T, exists bool, err error) {
	if r.s == nil {
		return item, false, nil
	}
	return r.s.GetByKey(key)
}

// GetByNamespaceName returns the object stored under the key
// MetaNamespaceKey gives an object with this namespace and name, without
// building that key (see Indexer.GetByNamespaceName). It is the fast path
// of Lister.Get.
func (r Reader[T]) GetByNamespaceName(namespace, name string) (item T, exists bool) {
	if r.s == nil {
		return item, false
	}
	return r.s.GetByNamespaceName(namespace, name)
}

// List returns every stored object, in no particular order.
func (r Reader[T]) List() []T {
	if r.s == nil {
		return nil
	}
	return r.s.List()
}

// ListKeys returns every stored key, in no particular order.
func (r Reader[T]) ListKeys() []string {
	if r.s == nil {
		return nil
	}
	return r.s.ListKeys()
}

// Len returns the number of stored objects, without listing them.
func (r Reader[T]) Len() int {
	if r.s == nil {
		return 0
	}
	return r.s.Len()
}

// Index returns the stored objects that share at least one value of the
// named index with obj.
func (r Reader[T]) Index(indexName string, obj T) ([]T, error) {
	if r.s == nil {
		return nil, fmt.Errorf("cache: %w: %q", ErrIndexNotFound, indexName)
	}
	return r.s.Index(indexName, obj)
}

// ByIndex returns the objects indexed under value.
func (r Reader[T]) ByIndex(indexName, value string) ([]T, error) {
	if r.s == nil {
		return nil, fmt.Errorf("cache: %w: %q", ErrIndexNotFound, indexName)
	}
	return r.s.ByIndex(indexName, value)
}

// IndexKeys returns the keys of the objects indexed under value.
func (r Reader[T]) IndexKeys(indexName, value string) ([]string, error) {
	if r.s == nil {
		return nil, fmt.Errorf("cache: %w: %q", ErrIndexNotFound, indexName)
	}
	return r.s.IndexKeys(indexName, value)
}

// ListIndexFuncValues returns every value the named index holds.
func (r Reader[T]) ListIndexFuncValues(indexName string) []string {
	if r.s == nil {
		return nil
	}
	return r.s.ListIndexFuncValues(indexName)
}

// GetIndexers returns a copy of the registered index functions.
func (r Reader[T]) GetIndexers() Indexers[T] {
	if r.s == nil {
		return Indexers[T]{}
	}
	return r.s.GetIndexers()
}

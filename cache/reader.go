package cache

import "fmt"

// Reader is a read-only view of an Indexer: every read method, no write
// method. It is what an informer hands its users, so that the compiler,
// not a comment, keeps everyone but the informer from writing to its
// cache. It is a small value (copy it freely) that reads the indexer's
// current content on every call; it is safe for concurrent use. Get one
// from Indexer.Reader, or join the Readers of disjoint caches with
// JoinReaders. The zero Reader reads as empty.
//
// Returned objects are shared with the cache and every other reader: they
// must not be mutated (copy them first). Returned slices belong to the
// caller.
type Reader[T Object] struct {
	// One of the two is set (or neither, for the zero Reader): s for an
	// Indexer's content, parts for a join. Two fields rather than an
	// interface keep the indexer's reads, the common case, a direct call.
	s     *Indexer[T]
	parts func() []Reader[T]
}

// JoinReaders returns one Reader over several caches whose keys do not
// overlap, such as the caches of the hash ranges of one resource that a
// sharded informer keeps apart. parts is called on every read, so the
// set of caches may change between reads (a range acquired or released);
// one read sees the set of one call. A key is looked up in each part in
// turn; lists, counts and index lookups add up the parts'. GetIndexers
// answers with the first part's index functions (the parts of a join are
// expected to share them), and an index lookup fails if any part lacks
// the index.
func JoinReaders[T Object](parts func() []Reader[T]) Reader[T] {
	return Reader[T]{parts: parts}
}

// Get returns the object stored under obj's key.
func (r Reader[T]) Get(obj T) (item T, exists bool, err error) {
	if r.parts != nil {
		for _, p := range r.parts() {
			if item, exists, err = p.Get(obj); exists || err != nil {
				return item, exists, err
			}
		}
		return item, false, nil
	}
	if r.s == nil {
		return item, false, nil
	}
	return r.s.Get(obj)
}

// GetByKey returns the object stored under key.
func (r Reader[T]) GetByKey(key string) (item T, exists bool, err error) {
	if r.parts != nil {
		for _, p := range r.parts() {
			if item, exists, err = p.GetByKey(key); exists || err != nil {
				return item, exists, err
			}
		}
		return item, false, nil
	}
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
	if r.parts != nil {
		for _, p := range r.parts() {
			if item, exists = p.GetByNamespaceName(namespace, name); exists {
				return item, true
			}
		}
		return item, false
	}
	if r.s == nil {
		return item, false
	}
	return r.s.GetByNamespaceName(namespace, name)
}

// List returns every stored object, in no particular order.
func (r Reader[T]) List() []T {
	if r.parts != nil {
		var out []T
		for _, p := range r.parts() {
			out = append(out, p.List()...)
		}
		return out
	}
	if r.s == nil {
		return nil
	}
	return r.s.List()
}

// ListKeys returns every stored key, in no particular order.
func (r Reader[T]) ListKeys() []string {
	if r.parts != nil {
		var out []string
		for _, p := range r.parts() {
			out = append(out, p.ListKeys()...)
		}
		return out
	}
	if r.s == nil {
		return nil
	}
	return r.s.ListKeys()
}

// Len returns the number of stored objects, without listing them.
func (r Reader[T]) Len() int {
	if r.parts != nil {
		n := 0
		for _, p := range r.parts() {
			n += p.Len()
		}
		return n
	}
	if r.s == nil {
		return 0
	}
	return r.s.Len()
}

// Index returns the stored objects that share at least one value of the
// named index with obj.
func (r Reader[T]) Index(indexName string, obj T) ([]T, error) {
	if r.parts != nil {
		return joinLists(r.parts(), func(p Reader[T]) ([]T, error) { return p.Index(indexName, obj) })
	}
	if r.s == nil {
		return nil, fmt.Errorf("cache: %w: %q", ErrIndexNotFound, indexName)
	}
	return r.s.Index(indexName, obj)
}

// ByIndex returns the objects indexed under value.
func (r Reader[T]) ByIndex(indexName, value string) ([]T, error) {
	if r.parts != nil {
		return joinLists(r.parts(), func(p Reader[T]) ([]T, error) { return p.ByIndex(indexName, value) })
	}
	if r.s == nil {
		return nil, fmt.Errorf("cache: %w: %q", ErrIndexNotFound, indexName)
	}
	return r.s.ByIndex(indexName, value)
}

// IndexKeys returns the keys of the objects indexed under value.
func (r Reader[T]) IndexKeys(indexName, value string) ([]string, error) {
	if r.parts != nil {
		return joinLists(r.parts(), func(p Reader[T]) ([]string, error) { return p.IndexKeys(indexName, value) })
	}
	if r.s == nil {
		return nil, fmt.Errorf("cache: %w: %q", ErrIndexNotFound, indexName)
	}
	return r.s.IndexKeys(indexName, value)
}

// ListIndexFuncValues returns every value the named index holds.
func (r Reader[T]) ListIndexFuncValues(indexName string) []string {
	if r.parts != nil {
		var out []string
		seen := map[string]bool{}
		for _, p := range r.parts() {
			for _, v := range p.ListIndexFuncValues(indexName) {
				if !seen[v] {
					seen[v] = true
					out = append(out, v)
				}
			}
		}
		return out
	}
	if r.s == nil {
		return nil
	}
	return r.s.ListIndexFuncValues(indexName)
}

// GetIndexers returns a copy of the registered index functions.
func (r Reader[T]) GetIndexers() Indexers[T] {
	if r.parts != nil {
		if parts := r.parts(); len(parts) > 0 {
			return parts[0].GetIndexers()
		}
		return Indexers[T]{}
	}
	if r.s == nil {
		return Indexers[T]{}
	}
	return r.s.GetIndexers()
}

// joinLists adds up one list read over the parts of a join, failing with
// the first part's error.
func joinLists[T Object, E any](parts []Reader[T], read func(Reader[T]) ([]E, error)) ([]E, error) {
	var out []E
	for _, p := range parts {
		l, err := read(p)
		if err != nil {
			return nil, err
		}
		out = append(out, l...)
	}
	return out, nil
}

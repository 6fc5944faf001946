package cache

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// ThreadSafeStoreOptions configures NewThreadSafeStore.
type ThreadSafeStoreOptions[T Object] struct {
	// Indexers are the index functions to maintain from the start. More
	// can be added later with AddIndexers.
	Indexers Indexers[T]
}

// ThreadSafeStore is a keyed map of objects with secondary indexes, guarded
// by one read-write lock. It is the storage under every Indexer: it is told
// keys rather than computing them. Readers run concurrently with each other;
// writers are serialized. Every method is safe for concurrent use.
//
// Index functions must be deterministic: the values an object was indexed
// under are found again by calling the function on the stored object. Each
// write computes the new object's index values before changing anything, so
// a failing index function leaves the store unchanged.
//
// Objects returned are the stored objects themselves, shared with every
// reader: they must not be mutated. The zero ThreadSafeStore is not
// usable: create one with NewThreadSafeStore.
type ThreadSafeStore[T Object] struct {
	mu sync.RWMutex // guards every field below
	// items holds the objects by key.
	items map[string]T
	// names, funcs and indices are parallel slices, one element per index,
	// ordered by name. pos maps a name to its position.
	names   []string
	funcs   []IndexFunc[T]
	indices []index
	pos     map[string]int
}

// NewThreadSafeStore returns an empty store with the given indexes. It
// panics if an index function is nil, which is a programming error.
func NewThreadSafeStore[T Object](opts ThreadSafeStoreOptions[T]) *ThreadSafeStore[T] {
	for name, fn := range opts.Indexers {
		if fn == nil {
			panic(fmt.Sprintf("cache: index %q has a nil index function", name))
		}
	}
	s := &ThreadSafeStore[T]{items: make(map[string]T), pos: make(map[string]int)}
	s.installIndexersLocked(opts.Indexers, nil)
	return s
}

// installIndexersLocked adds the index functions in add, with their already
// computed indices (nil means empty ones), keeping names sorted.
func (s *ThreadSafeStore[T]) installIndexersLocked(add Indexers[T], built map[string]index) {
	for name, fn := range add {
		idx := built[name]
		if idx == nil {
			idx = make(index)
		}
		i, _ := slices.BinarySearch(s.names, name)
		s.names = slices.Insert(s.names, i, name)
		s.funcs = slices.Insert(s.funcs, i, fn)
		s.indices = slices.Insert(s.indices, i, idx)
	}
	clear(s.pos)
	for i, name := range s.names {
		s.pos[name] = i
	}
}

// Add stores obj under key, replacing what was stored there. It is the
// same as Update.
func (s *ThreadSafeStore[T]) Add(key string, obj T) error { return s.Update(key, obj) }

// Update stores obj under key, replacing what was stored there, and moves
// key between index values as obj's values require. If an index function
// fails on obj, Update returns an *IndexFuncError and changes nothing.
func (s *ThreadSafeStore[T]) Update(key string, obj T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.funcs) == 0 {
		s.items[key] = obj
		return nil
	}
	if old, had := s.items[key]; had && sameObject(old, obj) {
		// Storing the object already stored (a resync does): its index
		// values cannot have changed.
		return nil
	}
	// Compute every new value first, so that a failure changes nothing.
	// One or two indexes (the usual case) need no allocation here.
	var buf [2][]string
	newVals := buf[:0]
	for i, fn := range s.funcs {
		vals, err := fn(obj)
		if err != nil {
			return &IndexFuncError{Index: s.names[i], Key: key, Err: err}
		}
		newVals = append(newVals, vals)
	}
	old, had := s.items[key]
	s.items[key] = obj
	for i, idx := range s.indices {
		if !had {
			for _, v := range newVals[i] {
				idx.insert(v, key)
			}
			continue
		}
		oldVals, err := s.funcs[i](old)
		if err != nil {
			idx.removeEverywhere(key)
			oldVals = nil
		}
		idx.update(key, oldVals, newVals[i])
	}
	return nil
}

// Delete removes what is stored under key, if anything.
func (s *ThreadSafeStore[T]) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.items[key]
	if !had {
		return
	}
	s.unindexLocked(key, old)
	delete(s.items, key)
}

func (s *ThreadSafeStore[T]) unindexLocked(key string, old T) {
	for i, idx := range s.indices {
		vals, err := s.funcs[i](old)
		if err != nil {
			idx.removeEverywhere(key)
			continue
		}
		for _, v := range vals {
			idx.remove(v, key)
		}
	}
}

// Get returns the object stored under key.
func (s *ThreadSafeStore[T]) Get(key string) (item T, exists bool) {
	s.mu.RLock()
	item, exists = s.items[key]
	s.mu.RUnlock()
	return item, exists
}

// Len returns the number of stored objects.
func (s *ThreadSafeStore[T]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}

// List returns every stored object, in no particular order, in a new slice.
func (s *ThreadSafeStore[T]) List() []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]T, 0, len(s.items))
	for _, obj := range s.items {
		out = append(out, obj)
	}
	return out
}

// ListKeys returns every stored key, in no particular order, in a new slice.
func (s *ThreadSafeStore[T]) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.items))
	for key := range s.items {
		out = append(out, key)
	}
	return out
}

// Replace swaps the whole content for items and rebuilds every index. The
// store takes ownership of the items map: the caller must not use it
// afterwards. If an index function fails, Replace returns an
// *IndexFuncError and the store keeps its old content. The store keeps no
// resource version; resourceVersion is accepted so the signature mirrors
// Writer.Replace.
func (s *ThreadSafeStore[T]) Replace(items map[string]T, resourceVersion string) error {
	_ = resourceVersion
	if items == nil {
		items = make(map[string]T)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	indices := make([]index, len(s.funcs))
	for i, fn := range s.funcs {
		idx, err := buildIndex(s.names[i], fn, items)
		if err != nil {
			return err
		}
		indices[i] = idx
	}
	s.items = items
	s.indices = indices
	return nil
}

// buildIndex indexes every item with fn.
func buildIndex[T Object](name string, fn IndexFunc[T], items map[string]T) (index, error) {
	idx := make(index)
	for key, obj := range items {
		vals, err := fn(obj)
		if err != nil {
			return nil, &IndexFuncError{Index: name, Key: key, Err: err}
		}
		for _, v := range vals {
			idx.insert(v, key)
		}
	}
	return idx, nil
}

// indexLocked returns the named index, or an error matching
// ErrIndexNotFound.
func (s *ThreadSafeStore[T]) indexLocked(name string) (index, IndexFunc[T], error) {
	i, ok := s.pos[name]
	if !ok {
		return nil, nil, fmt.Errorf("cache: %w: %q", ErrIndexNotFound, name)
	}
	return s.indices[i], s.funcs[i], nil
}

// Index returns the stored objects that share at least one value of the
// named index with obj, each once, in no particular order.
func (s *ThreadSafeStore[T]) Index(indexName string, obj T) ([]T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	idx, fn, err := s.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	vals, err := fn(obj)
	if err != nil {
		return nil, &IndexFuncError{Index: indexName, Err: err}
	}
	if len(vals) == 1 {
		return s.objectsLocked(idx[vals[0]]), nil
	}
	seen := make(map[string]struct{})
	var out []T
	for _, v := range vals {
		for key := range idx[v] {
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = struct{}{}
			out = append(out, s.items[key])
		}
	}
	return out, nil
}

func (s *ThreadSafeStore[T]) objectsLocked(set map[string]struct{}) []T {
	out := make([]T, 0, len(set))
	for key := range set {
		out = append(out, s.items[key])
	}
	return out
}

// ByIndex returns the objects indexed under value, in no particular order.
func (s *ThreadSafeStore[T]) ByIndex(indexName, value string) ([]T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	idx, _, err := s.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	return s.objectsLocked(idx[value]), nil
}

// IndexKeys returns the keys of the objects indexed under value, in no
// particular order.
func (s *ThreadSafeStore[T]) IndexKeys(indexName, value string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	idx, _, err := s.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	set := idx[value]
	out := make([]string, 0, len(set))
	for key := range set {
		out = append(out, key)
	}
	return out, nil
}

// ListIndexFuncValues returns every value the named index holds (values
// with at least one object), in no particular order; nil for an unknown
// index.
func (s *ThreadSafeStore[T]) ListIndexFuncValues(indexName string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	idx, _, err := s.indexLocked(indexName)
	if err != nil {
		return nil
	}
	return slices.Collect(maps.Keys(idx))
}

// GetIndexers returns a copy of the registered index functions.
func (s *ThreadSafeStore[T]) GetIndexers() Indexers[T] {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(Indexers[T], len(s.names))
	for i, name := range s.names {
		out[name] = s.funcs[i]
	}
	return out
}

// AddIndexers registers more index functions and indexes every stored
// object under them. A name already registered fails with an error matching
// ErrIndexExists, a failing function with an *IndexFuncError; either way
// nothing is added.
func (s *ThreadSafeStore[T]) AddIndexers(newIndexers Indexers[T]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	built := make(map[string]index, len(newIndexers))
	for name, fn := range newIndexers {
		if _, dup := s.pos[name]; dup {
			return fmt.Errorf("cache: %w: %q", ErrIndexExists, name)
		}
		if fn == nil {
			return fmt.Errorf("cache: index %q: nil index function", name)
		}
		idx, err := buildIndex(name, fn, s.items)
		if err != nil {
			return err
		}
		built[name] = idx
	}
	s.installIndexersLocked(newIndexers, built)
	return nil
}

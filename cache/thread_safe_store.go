package cache

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/kinformer/kinformer/internal/objutil"
)

// threadSafeStore is a keyed map of objects with secondary indexes. It is
// the storage under every Indexer: it is told keys rather than computing
// them. Every method is safe for concurrent use. Writers are serialized by
// one read-write lock, which readers of indexes and lists share. Get and
// GetByNamespaceName take no lock at all in the nested layout (below):
// they read maps built for one writer and lock-free readers (rmap), so
// point reads from many goroutines scale with cores instead of contending
// on the lock. Every read sees each write either wholly or not at all, and
// a read that starts after a write has returned sees it.
//
// Index functions must be deterministic: the values an object was indexed
// under are found again by calling the function on the stored object. Each
// write computes the new object's index values before changing anything, so
// a failing index function leaves the store unchanged.
//
// Layout. While every key is the one MetaNamespaceKey gives its object
// ("namespace/name", or "name" when the namespace is empty), objects are
// held by namespace, then name, under the objects' own strings: no key
// string is kept per object, GetByNamespaceName builds no key, and an index
// whose function gives every stored object exactly its namespace (as
// MetaNamespaceIndexFunc does) is answered from the namespaces themselves,
// with no sets of its own (a virtual index). Both conditions are checked on
// every write, whatever the functions are called, so a custom KeyFunc or
// index function is never taken for the default: the first key or index
// value that does not fit turns the store (or that index) into a plain map
// of keys, with the same results, until the next Replace.
//
// Objects returned are the stored objects themselves, shared with every
// reader: they must not be mutated. The zero threadSafeStore is not
// usable: create one with newThreadSafeStore.
type threadSafeStore[T Object] struct {
	// mu guards every field below, except that Get and GetByNamespaceName
	// read items' nested layout without it (objects documents how).
	mu sync.RWMutex
	// items holds the objects by key.
	items objects[T]
	// names, funcs and indices are parallel slices, one element per index,
	// ordered by name. pos maps a name to its position. A nil element of
	// indices is a virtual index: every stored object's only value is its
	// namespace, and items (then nested) answers for it.
	names   []string
	funcs   []IndexFunc[T]
	indices []index
	pos     map[string]int
}

// newThreadSafeStore returns an empty store with the given indexes. It
// panics if an index function is nil, which is a programming error.
func newThreadSafeStore[T Object](indexers Indexers[T]) *threadSafeStore[T] {
	built := make(map[string]index, len(indexers))
	for name, fn := range indexers {
		if fn == nil {
			panic(fmt.Sprintf("cache: index %q has a nil index function", name))
		}
		built[name] = nil // virtual: the store is empty and nested
	}
	s := &threadSafeStore[T]{pos: make(map[string]int)}
	s.items.adopt(newObjects[T]())
	s.installIndexersLocked(indexers, built)
	return s
}

// installIndexersLocked adds the index functions in add, with their already
// built indices (nil for a virtual one), keeping names sorted.
func (s *threadSafeStore[T]) installIndexersLocked(add Indexers[T], built map[string]index) {
	for name, fn := range add {
		i, _ := slices.BinarySearch(s.names, name)
		s.names = slices.Insert(s.names, i, name)
		s.funcs = slices.Insert(s.funcs, i, fn)
		s.indices = slices.Insert(s.indices, i, built[name])
	}
	clear(s.pos)
	for i, name := range s.names {
		s.pos[name] = i
	}
}

// conforms reports whether vals, an index function's values for an object
// in namespace ns, are what a virtual index holds it under.
func conforms(vals []string, ns string) bool { return len(vals) == 1 && vals[0] == ns }

// materializeLocked gives the virtual index i sets of its own, holding
// every stored object under its namespace.
func (s *threadSafeStore[T]) materializeLocked(i int) {
	idx := make(index)
	for key := range s.items.all() {
		ns, _, _ := splitKey(key) // every key fits while the index is virtual
		idx.insert(ns, key)
	}
	s.indices[i] = idx
}

// flattenLocked switches the store to the flat layout, giving every
// virtual index sets of its own first (they share the flat keys).
func (s *threadSafeStore[T]) flattenLocked() {
	if !s.items.isNested() {
		return
	}
	s.items.flatten()
	for i, idx := range s.indices {
		if idx == nil {
			s.materializeLocked(i)
		}
	}
}

// Add stores obj under key, replacing what was stored there. It is the
// same as Update.
func (s *threadSafeStore[T]) Add(key string, obj T) error { return s.Update(key, obj) }

// Update stores obj under key, replacing what was stored there, and moves
// key between index values as obj's values require. If an index function
// fails on obj, Update returns an *IndexFuncError and changes nothing.
func (s *threadSafeStore[T]) Update(key string, obj T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.funcs) == 0 {
		if s.items.isNested() && !fits(key, obj) {
			s.flattenLocked()
		}
		s.items.put(key, obj)
		return nil
	}
	old, had := s.items.get(key)
	if had && objutil.Same(old, obj) {
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
	if s.items.isNested() && !fits(key, obj) {
		s.flattenLocked()
	}
	for i, idx := range s.indices {
		if idx == nil {
			if conforms(newVals[i], obj.GetNamespace()) {
				continue // s.items.put below is the whole update
			}
			s.materializeLocked(i)
			idx = s.indices[i]
		}
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
	s.items.put(key, obj)
	return nil
}

// Delete removes what is stored under key, if anything.
func (s *threadSafeStore[T]) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.items.get(key)
	if !had {
		return
	}
	s.unindexLocked(key, old)
	s.items.del(key)
}

// unindexLocked removes key from every index with sets of its own.
func (s *threadSafeStore[T]) unindexLocked(key string, old T) {
	for i, idx := range s.indices {
		if idx == nil {
			continue
		}
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
func (s *threadSafeStore[T]) Get(key string) (item T, exists bool) {
	if root := s.items.nested.Load(); root != nil {
		return s.items.getNested(root, key) // no lock: see objects
	}
	s.mu.RLock()
	item, exists = s.items.get(key)
	s.mu.RUnlock()
	return item, exists
}

// GetByNamespaceName returns the object stored under the key
// MetaNamespaceKey gives an object with this namespace and name
// ("namespace/name", or "name" when namespace is empty): the same as Get
// with that key. In the nested layout it builds no key and allocates
// nothing.
func (s *threadSafeStore[T]) GetByNamespaceName(namespace, name string) (item T, exists bool) {
	if item, exists, nested := s.items.lookup(namespace, name); nested {
		return item, exists
	}
	s.mu.RLock()
	item, exists = s.items.lookupFlat(namespace, name)
	s.mu.RUnlock()
	return item, exists
}

// Len returns the number of stored objects.
func (s *threadSafeStore[T]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.items.len()
}

// List returns every stored object, in no particular order, in a new slice.
func (s *threadSafeStore[T]) List() []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]T, 0, s.items.len())
	for obj := range s.items.values() {
		out = append(out, obj)
	}
	return out
}

// ListKeys returns every stored key, in no particular order, in a new
// slice. In the nested layout the keys are built by this call.
func (s *threadSafeStore[T]) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, s.items.len())
	for key := range s.items.all() {
		out = append(out, key)
	}
	return out
}

// Reserve is a hint that objs are about to be added (typically an initial
// list into an empty store): it sizes storage for them up front, so that
// adding them one by one does not grow maps step by step. It changes no
// contents, and adding other objects, or not all of them, is fine.
func (s *threadSafeStore[T]) Reserve(objs []T) {
	s.mu.Lock()
	s.items.reserve(objs)
	s.mu.Unlock()
}

// Replace swaps the whole content for items and rebuilds every index. The
// store takes ownership of the items map: the caller must not use it
// afterwards. If an index function fails, Replace returns an
// *IndexFuncError and the store keeps its old content.
func (s *threadSafeStore[T]) Replace(items map[string]T) error {
	if items == nil {
		items = make(map[string]T)
	}
	return s.replaceObjects(objectsFromMap(items))
}

// replaceObjects is Replace with the objects already laid out; the store
// takes ownership of o.
func (s *threadSafeStore[T]) replaceObjects(o *objects[T]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	indices := make([]index, len(s.funcs))
	for i, fn := range s.funcs {
		idx, err := buildIndex(s.names[i], fn, o)
		if err != nil {
			return err
		}
		indices[i] = idx
	}
	s.items.adopt(o)
	s.indices = indices
	return nil
}

// buildIndex indexes every object of o with fn. It returns a nil (virtual)
// index when o is nested and fn gives every object exactly its namespace.
func buildIndex[T Object](name string, fn IndexFunc[T], o *objects[T]) (index, error) {
	if o.isNested() && nestedConforms(fn, o) {
		return nil, nil
	}
	idx := make(index)
	for key, obj := range o.all() {
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

// nestedConforms reports whether fn gives every object of the nested o
// exactly its namespace. It stops at the first object that differs; an
// error counts as differing (buildIndex then reports it).
func nestedConforms[T Object](fn IndexFunc[T], o *objects[T]) bool {
	for ns, names := range o.namespaces() {
		for _, obj := range names.All() {
			vals, err := fn(obj)
			if err != nil || !conforms(vals, ns) {
				return false
			}
		}
	}
	return true
}

// indexLocked returns the named index, or an error matching
// ErrIndexNotFound.
func (s *threadSafeStore[T]) indexLocked(name string) (index, IndexFunc[T], error) {
	i, ok := s.pos[name]
	if !ok {
		return nil, nil, fmt.Errorf("cache: %w: %q", ErrIndexNotFound, name)
	}
	return s.indices[i], s.funcs[i], nil
}

// Index returns the stored objects that share at least one value of the
// named index with obj, each once, in no particular order.
func (s *threadSafeStore[T]) Index(indexName string, obj T) ([]T, error) {
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
		return s.byValueLocked(idx, vals[0]), nil
	}
	if idx == nil {
		// Each object is under one namespace: distinct values give
		// distinct objects.
		var out []T
		seen := make(map[string]struct{}, len(vals))
		for _, v := range vals {
			if _, dup := seen[v]; dup {
				continue
			}
			seen[v] = struct{}{}
			if names := s.items.namespace(v); names != nil {
				for _, o := range names.All() {
					out = append(out, o)
				}
			}
		}
		return out, nil
	}
	seen := make(map[string]struct{})
	var out []T
	for _, v := range vals {
		for key := range idx[v] {
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = struct{}{}
			o, _ := s.items.get(key)
			out = append(out, o)
		}
	}
	return out, nil
}

// byValueLocked returns the objects idx holds under value (idx nil: the
// objects of namespace value), in a new slice.
func (s *threadSafeStore[T]) byValueLocked(idx index, value string) []T {
	if idx == nil {
		names := s.items.namespace(value)
		if names == nil {
			return []T{}
		}
		out := make([]T, 0, names.Len())
		for _, o := range names.All() {
			out = append(out, o)
		}
		return out
	}
	set := idx[value]
	out := make([]T, 0, len(set))
	for key := range set {
		o, _ := s.items.get(key)
		out = append(out, o)
	}
	return out
}

// ByIndex returns the objects indexed under value, in no particular order.
func (s *threadSafeStore[T]) ByIndex(indexName, value string) ([]T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	idx, _, err := s.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	return s.byValueLocked(idx, value), nil
}

// IndexKeys returns the keys of the objects indexed under value, in no
// particular order. For a virtual index the keys are built by this call.
func (s *threadSafeStore[T]) IndexKeys(indexName, value string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	idx, _, err := s.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	if idx == nil {
		names := s.items.namespace(value)
		if names == nil {
			return []string{}, nil
		}
		out := make([]string, 0, names.Len())
		for name := range names.All() {
			out = append(out, joinKey(value, name))
		}
		return out, nil
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
func (s *threadSafeStore[T]) ListIndexFuncValues(indexName string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	idx, _, err := s.indexLocked(indexName)
	if err != nil {
		return nil
	}
	if idx == nil {
		out := make([]string, 0, s.items.nested.Load().Len())
		for ns := range s.items.namespaces() {
			out = append(out, ns)
		}
		return out
	}
	return slices.Collect(maps.Keys(idx))
}

// GetIndexers returns a copy of the registered index functions.
func (s *threadSafeStore[T]) GetIndexers() Indexers[T] {
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
func (s *threadSafeStore[T]) AddIndexers(newIndexers Indexers[T]) error {
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
		idx, err := buildIndex(name, fn, &s.items)
		if err != nil {
			return err
		}
		built[name] = idx
	}
	s.installIndexersLocked(newIndexers, built)
	return nil
}

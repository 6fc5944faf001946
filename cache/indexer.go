package cache

import (
	"fmt"
)

// IndexerOptions configures NewIndexer. The zero value is a plain store
// keyed by MetaNamespaceKey with no indexes.
type IndexerOptions[T Object] struct {
	// KeyFunc computes the key of each object. Default MetaNamespaceKey.
	KeyFunc KeyFunc[T]
	// Indexers are the index functions to maintain from the start; more
	// can be added later with AddIndexers.
	Indexers Indexers[T]
	// Namespace, when not empty, restricts the store to that namespace:
	// writes and look-ups of an object from another namespace fail with a
	// *NamespaceError matching ErrWrongNamespace. Use it for the cache of a
	// namespace-scoped informer, where such an object can only be a bug.
	Namespace string
}

// NewIndexer returns an empty Indexer. There is no separate constructor for
// a plain Store: an Indexer without indexes is one, at no extra cost. It
// panics if an index function is nil, which is a programming error.
func NewIndexer[T Object](opts IndexerOptions[T]) *Indexer[T] {
	keyFunc := opts.KeyFunc
	if keyFunc == nil {
		keyFunc = MetaNamespaceKey[T]
	}
	return &Indexer[T]{
		keyFunc:   keyFunc,
		namespace: opts.Namespace,
		store:     newThreadSafeStore(opts.Indexers),
	}
}

// Indexer is a Store with named secondary indexes: the cache under every
// informer. It is safe for concurrent use.
//
// Every write computes the key (and every index value) before changing
// anything, so a write that fails — key function error, nil object, wrong
// namespace, index function error — returns the error and leaves the store
// as it was. Objects it returns are shared with every other reader and
// must not be mutated.
//
// Layout and speed. While every key is the one MetaNamespaceKey gives its
// object, objects are held by namespace, then name, with no key string
// kept per object; GetByNamespaceName then builds no key, and Get,
// GetByKey and GetByNamespaceName take no lock at all. An index whose
// function gives every object exactly its namespace (MetaNamespaceIndexFunc)
// is answered from that layout with no sets of its own. Both conditions are
// checked on every write, whatever the functions are called: the first key
// or index value that does not fit turns the store (or that index) into a
// plain map of keys, with the same results, until the next Replace.
//
// An Indexer's owner writes to it; everyone else should get its Reader,
// which has every read method and no write method.
type Indexer[T Object] struct {
	// Set by NewIndexer, then read-only; store does its own locking.
	keyFunc   KeyFunc[T]
	namespace string
	store     *threadSafeStore[T]
}

var _ Store[Object] = (*Indexer[Object])(nil)

// Reader returns a read-only view of the indexer: the same content, live,
// through the read methods only.
func (s *Indexer[T]) Reader() Reader[T] { return Reader[T]{s: s} }

// keyOf computes obj's key, rejecting nil objects (before any method is
// called on them) and objects from the wrong namespace.
func (s *Indexer[T]) keyOf(op string, obj T) (string, error) {
	if isNil(obj) {
		return "", fmt.Errorf("cache: %s: %w: nil %T", op, ErrInvalidObject, obj)
	}
	if s.namespace != "" {
		if ns := obj.GetNamespace(); ns != s.namespace {
			return "", fmt.Errorf("cache: %s: %w", op, &NamespaceError{Want: s.namespace, Got: ns, Name: obj.GetName()})
		}
	}
	key, err := s.keyFunc(obj)
	if err != nil {
		return "", keyFuncError(op, err)
	}
	return key, nil
}

// Add stores obj under its key, replacing what was stored there.
func (s *Indexer[T]) Add(obj T) error {
	key, err := s.keyOf("add", obj)
	if err != nil {
		return err
	}
	return s.store.Update(key, obj)
}

// Update is the same as Add.
func (s *Indexer[T]) Update(obj T) error {
	key, err := s.keyOf("update", obj)
	if err != nil {
		return err
	}
	return s.store.Update(key, obj)
}

// Delete removes what is stored under obj's key, if anything.
func (s *Indexer[T]) Delete(obj T) error {
	key, err := s.keyOf("delete", obj)
	if err != nil {
		return err
	}
	s.store.Delete(key)
	return nil
}

// Replace swaps the whole content for items. When several items share a
// key, the last one wins. An item that cannot be stored (nil, from another
// namespace, or whose key cannot be computed) is skipped: the others are
// stored, and Replace returns an error wrapping a *SkippedError (matching
// ErrSkipped) that names each skipped item, as DeltaFIFO.Replace does. An
// index function failing on any item fails the whole Replace, which then
// changes nothing.
func (s *Indexer[T]) Replace(items []T) error {
	o := newObjects[T]()
	var skipped []error
	for i, obj := range items {
		key, err := s.keyOf("replace", obj)
		if err != nil {
			skipped = append(skipped, itemError(i, obj, err))
			continue
		}
		if o.isNested() && !fits(key, obj) {
			o.flatten()
		}
		o.put(key, obj)
	}
	if err := s.store.replaceObjects(o); err != nil {
		return err
	}
	if len(skipped) > 0 {
		return fmt.Errorf("cache: replace: %w", &SkippedError{Errs: skipped, Total: len(items)})
	}
	return nil
}

// List returns every stored object, in no particular order, in a new
// slice.
func (s *Indexer[T]) List() []T { return s.store.List() }

// ListKeys returns every stored key, in no particular order, in a new
// slice. In the namespace/name layout the keys are built by this call: use
// Len to count.
func (s *Indexer[T]) ListKeys() []string { return s.store.ListKeys() }

// Reserve is a hint that objs are about to be added (typically a first
// list into an empty store): it sizes storage for them up front, so that
// adding them one by one does not grow maps step by step. It changes no
// contents, and adding other objects, or not all of them, is fine. An
// informer calls it with its first list.
func (s *Indexer[T]) Reserve(objs []T) { s.store.Reserve(objs) }

// Len returns the number of stored objects, without listing them.
func (s *Indexer[T]) Len() int { return s.store.Len() }

// Get returns the object stored under obj's key. The error is obj's key
// function error, or ErrInvalidObject for a nil obj.
func (s *Indexer[T]) Get(obj T) (item T, exists bool, err error) {
	key, err := s.keyOf("get", obj)
	if err != nil {
		return item, false, err
	}
	item, exists = s.store.Get(key)
	return item, exists, nil
}

// GetByKey returns the object stored under key. It never fails: the
// error is there to satisfy Store.
func (s *Indexer[T]) GetByKey(key string) (item T, exists bool, err error) {
	item, exists = s.store.Get(key)
	return item, exists, nil
}

// GetByNamespaceName is GetByKey with the key MetaNamespaceKey gives an
// object with this namespace and name ("namespace/name", or "name" when
// namespace is empty), without building that key while the store is laid
// out by namespace: it then allocates nothing and takes no lock. It
// ignores IndexerOptions.Namespace, as GetByKey does.
func (s *Indexer[T]) GetByNamespaceName(namespace, name string) (item T, exists bool) {
	return s.store.GetByNamespaceName(namespace, name)
}

// Index returns the stored objects that share at least one value of the
// named index with obj.
func (s *Indexer[T]) Index(indexName string, obj T) ([]T, error) {
	if isNil(obj) {
		return nil, fmt.Errorf("cache: index: %w: nil %T", ErrInvalidObject, obj)
	}
	return s.store.Index(indexName, obj)
}

// IndexKeys returns the keys of the objects indexed under value.
func (s *Indexer[T]) IndexKeys(indexName, value string) ([]string, error) {
	return s.store.IndexKeys(indexName, value)
}

// ListIndexFuncValues returns every value the named index holds.
func (s *Indexer[T]) ListIndexFuncValues(indexName string) []string {
	return s.store.ListIndexFuncValues(indexName)
}

// ByIndex returns the objects indexed under value.
func (s *Indexer[T]) ByIndex(indexName, value string) ([]T, error) {
	return s.store.ByIndex(indexName, value)
}

// GetIndexers returns a copy of the registered index functions.
func (s *Indexer[T]) GetIndexers() Indexers[T] { return s.store.GetIndexers() }

// AddIndexers registers more index functions and indexes what is already
// stored under them. Adding a name that exists is an error.
func (s *Indexer[T]) AddIndexers(newIndexers Indexers[T]) error {
	return s.store.AddIndexers(newIndexers)
}

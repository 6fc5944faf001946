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
//
// The Indexer is safe for concurrent use. Every write computes the key (and
// every index value) before changing anything, so a write that fails — key
// function error, nil object, wrong namespace, index function error —
// returns the error and leaves the store as it was. Objects it returns are
// shared with every other reader and must not be mutated.
func NewIndexer[T Object](opts IndexerOptions[T]) Indexer[T] {
	keyFunc := opts.KeyFunc
	if keyFunc == nil {
		keyFunc = MetaNamespaceKey[T]
	}
	return &indexer[T]{
		keyFunc:   keyFunc,
		namespace: opts.Namespace,
		store:     NewThreadSafeStore(ThreadSafeStoreOptions[T]{Indexers: opts.Indexers}),
	}
}

// indexer implements Indexer over a ThreadSafeStore, computing keys. Its
// fields are set once by NewIndexer; store does its own locking.
type indexer[T Object] struct {
	keyFunc   KeyFunc[T]
	namespace string
	store     *ThreadSafeStore[T]
}

// keyOf computes obj's key, rejecting nil objects (before any method is
// called on them) and objects from the wrong namespace.
func (s *indexer[T]) keyOf(op string, obj T) (string, error) {
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
func (s *indexer[T]) Add(obj T) error {
	key, err := s.keyOf("add", obj)
	if err != nil {
		return err
	}
	return s.store.Update(key, obj)
}

// Update is the same as Add.
func (s *indexer[T]) Update(obj T) error {
	key, err := s.keyOf("update", obj)
	if err != nil {
		return err
	}
	return s.store.Update(key, obj)
}

// Delete removes what is stored under obj's key, if anything.
func (s *indexer[T]) Delete(obj T) error {
	key, err := s.keyOf("delete", obj)
	if err != nil {
		return err
	}
	s.store.Delete(key)
	return nil
}

// Replace swaps the whole content for items. When several items share a
// key, the last one wins.
func (s *indexer[T]) Replace(items []T, resourceVersion string) error {
	_ = resourceVersion
	o := newObjects[T]()
	for _, obj := range items {
		key, err := s.keyOf("replace", obj)
		if err != nil {
			return err
		}
		if o.isNested() && !fits(key, obj) {
			o.flatten()
		}
		o.put(key, obj)
	}
	return s.store.replaceObjects(o)
}

// Resync does nothing: a store has nobody to re-notify.
func (s *indexer[T]) Resync() error { return nil }

func (s *indexer[T]) List() []T          { return s.store.List() }
func (s *indexer[T]) ListKeys() []string { return s.store.ListKeys() }

// Reserve is ThreadSafeStore.Reserve: a hint that objs are about to be
// added, which sizes storage for them up front. A SharedIndexInformer gives
// it its first list.
func (s *indexer[T]) Reserve(objs []T) { s.store.Reserve(objs) }

// Len returns the number of stored objects. A DeltaFIFO whose KnownObjects
// has it asks it rather than listing every key, which ListKeys builds one
// by one in the nested layout.
func (s *indexer[T]) Len() int { return s.store.Len() }

func (s *indexer[T]) Get(obj T) (item T, exists bool, err error) {
	key, err := s.keyOf("get", obj)
	if err != nil {
		return item, false, err
	}
	item, exists = s.store.Get(key)
	return item, exists, nil
}

func (s *indexer[T]) GetByKey(key string) (item T, exists bool, err error) {
	item, exists = s.store.Get(key)
	return item, exists, nil
}

// GetByNamespaceName is GetByKey with the key MetaNamespaceKey gives an
// object with this namespace and name, without building it when the store
// is laid out by namespace (see ThreadSafeStore). Listers use it through
// an optional interface; it ignores IndexerOptions.Namespace, as GetByKey
// does.
func (s *indexer[T]) GetByNamespaceName(namespace, name string) (item T, exists bool) {
	return s.store.GetByNamespaceName(namespace, name)
}

func (s *indexer[T]) Index(indexName string, obj T) ([]T, error) {
	if isNil(obj) {
		return nil, fmt.Errorf("cache: index: %w: nil %T", ErrInvalidObject, obj)
	}
	return s.store.Index(indexName, obj)
}

func (s *indexer[T]) IndexKeys(indexName, value string) ([]string, error) {
	return s.store.IndexKeys(indexName, value)
}

func (s *indexer[T]) ListIndexFuncValues(indexName string) []string {
	return s.store.ListIndexFuncValues(indexName)
}

func (s *indexer[T]) ByIndex(indexName, value string) ([]T, error) {
	return s.store.ByIndex(indexName, value)
}

func (s *indexer[T]) GetIndexers() Indexers[T] { return s.store.GetIndexers() }

func (s *indexer[T]) AddIndexers(newIndexers Indexers[T]) error {
	return s.store.AddIndexers(newIndexers)
}

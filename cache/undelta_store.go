package cache

import "sync"

// UndeltaStoreOptions configures NewUndeltaStore.
type UndeltaStoreOptions[T Object] struct {
	// KeyFunc computes the key of each object. Default MetaNamespaceKey.
	KeyFunc KeyFunc[T]
	// Push receives the whole content after every successful write. It is
	// required.
	Push func(all []T)
}

// UndeltaStore is a Store that, after every successful Add, Update, Delete
// and Replace, calls Push with every object it holds: for consumers that
// want the whole state rather than changes. A failed write changes nothing
// and pushes nothing.
//
// It is safe for concurrent use. Writes and their pushes are serialized, so
// pushes arrive in the order of the writes, each with the state that write
// produced. Push runs while writes are held off: it may read the store but
// must not write to it. The slice passed to Push is Push's to keep; the
// objects in it are shared and must not be mutated. The zero UndeltaStore
// is not usable: create one with NewUndeltaStore.
type UndeltaStore[T Object] struct {
	push func([]T) // set by NewUndeltaStore, then read-only

	writeMu sync.Mutex  // serializes a write with its push
	store   *Indexer[T] // does its own locking
}

var _ Store[Object] = (*UndeltaStore[Object])(nil)

// NewUndeltaStore returns an empty UndeltaStore. It panics if opts.Push is
// nil, which is a programming error.
func NewUndeltaStore[T Object](opts UndeltaStoreOptions[T]) *UndeltaStore[T] {
	if opts.Push == nil {
		panic("cache: NewUndeltaStore: Push is nil")
	}
	return &UndeltaStore[T]{push: opts.Push, store: NewIndexer(IndexerOptions[T]{KeyFunc: opts.KeyFunc})}
}

func (u *UndeltaStore[T]) write(fn func() error) error {
	u.writeMu.Lock()
	defer u.writeMu.Unlock()
	if err := fn(); err != nil {
		return err
	}
	u.push(u.store.List())
	return nil
}

// Add stores obj, then pushes.
func (u *UndeltaStore[T]) Add(obj T) error { return u.write(func() error { return u.store.Add(obj) }) }

// Update stores obj, then pushes.
func (u *UndeltaStore[T]) Update(obj T) error {
	return u.write(func() error { return u.store.Update(obj) })
}

// Delete removes obj's key, then pushes.
func (u *UndeltaStore[T]) Delete(obj T) error {
	return u.write(func() error { return u.store.Delete(obj) })
}

// Replace swaps the content for items, then pushes.
func (u *UndeltaStore[T]) Replace(items []T) error {
	return u.write(func() error { return u.store.Replace(items) })
}

// List returns every stored object.
func (u *UndeltaStore[T]) List() []T { return u.store.List() }

// ListKeys returns every stored key.
func (u *UndeltaStore[T]) ListKeys() []string { return u.store.ListKeys() }

// Get returns the object stored under obj's key.
func (u *UndeltaStore[T]) Get(obj T) (T, bool, error) { return u.store.Get(obj) }

// GetByKey returns the object stored under key.
func (u *UndeltaStore[T]) GetByKey(key string) (T, bool, error) { return u.store.GetByKey(key) }

package cache

import (
	"errors"
	"fmt"
	"sync"
)

// StoreWriterOptions configures NewStoreWriter. Store is required.
type StoreWriterOptions[T Object] struct {
	// Store receives the writes.
	Store Store[T]
	// KeyFunc keys the objects of a relist, to tell at its end which
	// stored keys it did not name. It must be the Store's key function.
	// Default MetaNamespaceKey.
	KeyFunc KeyFunc[T]
}

// StoreWriter is a Writer over any Store: what a reflector writes to keep
// a plain store, without notifications, equal to a source. It records the
// version the store reflects (ResourceVersion), and applies a relist as it
// arrives: each listed object is stored when it is read (Update), and the
// keys the list did not name are deleted at Finish, so that only the
// listed keys, not a second copy of the objects, are held meanwhile. A
// reader of the store sees, key by key, the old object or the listed one
// during a relist, and deleted objects until it ends. The first list, into
// a store nothing was written to through the StoreWriter, is a Replace.
//
// It is safe for concurrent use, though a reflector is its one writer. The
// zero StoreWriter is not usable: create one with NewStoreWriter.
type StoreWriter[T Object] struct {
	// Set by NewStoreWriter, then read-only.
	store   Store[T]
	keyFunc KeyFunc[T]

	mu sync.Mutex // guards the fields below
	// rv is the version the store reflects; "" before the first write.
	rv string
	// written is set by the first write the store took; relisting while a
	// relist session is open.
	written, relisting bool
}

var _ Writer[Object] = (*StoreWriter[Object])(nil)

// NewStoreWriter returns a StoreWriter over opts.Store. It panics if
// opts.Store is nil, which is a programming error.
func NewStoreWriter[T Object](opts StoreWriterOptions[T]) *StoreWriter[T] {
	if opts.Store == nil {
		panic("cache: NewStoreWriter: Store is nil")
	}
	w := &StoreWriter[T]{store: opts.Store, keyFunc: opts.KeyFunc}
	if w.keyFunc == nil {
		w.keyFunc = MetaNamespaceKey[T]
	}
	return w
}

// ResourceVersion returns the version the store reflects: that of the
// last write, list or bookmark; "" before the first.
func (w *StoreWriter[T]) ResourceVersion() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rv
}

// at records that the store reflects rv, after a write that did (wrote)
// or did not change it. A write the store refused still moves the
// version: the source will not send that change again.
func (w *StoreWriter[T]) at(rv string, wrote bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rv != "" {
		w.rv = rv
	}
	w.written = w.written || wrote
}

// versionOf is obj's resource version, "" for a nil obj.
func versionOf[T Object](obj T) string {
	if isNil(obj) {
		return ""
	}
	return obj.GetResourceVersion()
}

// Add stores obj; the store then reflects obj's version.
func (w *StoreWriter[T]) Add(obj T) error {
	err := w.store.Add(obj)
	w.at(versionOf(obj), err == nil)
	return err
}

// Update stores obj; the store then reflects obj's version.
func (w *StoreWriter[T]) Update(obj T) error {
	err := w.store.Update(obj)
	w.at(versionOf(obj), err == nil)
	return err
}

// Delete removes obj's key; the store then reflects obj's version.
func (w *StoreWriter[T]) Delete(obj T) error {
	err := w.store.Delete(obj)
	w.at(versionOf(obj), err == nil)
	return err
}

// Replace swaps the store's content for items (Store.Replace); the store
// then reflects resourceVersion, unless Replace failed for another reason
// than skipping items it could not store.
func (w *StoreWriter[T]) Replace(items []T, resourceVersion string) error {
	err := w.store.Replace(items)
	if err == nil || errors.Is(err, ErrSkipped) {
		w.at(resourceVersion, true)
	}
	return err
}

// Bookmark records that the store reflects resourceVersion.
func (w *StoreWriter[T]) Bookmark(resourceVersion string) { w.at(resourceVersion, false) }

// BeginRelist starts a relist applied as it arrives, once the store has
// been written to through w (a first list is a Replace), and while no
// other relist is open.
func (w *StoreWriter[T]) BeginRelist() (RelistSession[T], bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.written || w.relisting {
		return nil, false
	}
	w.relisting = true
	return &storeRelist[T]{w: w, listed: map[string]struct{}{}}, true
}

// storeRelist is a StoreWriter's relist in progress; listed holds the
// keys seen so far.
type storeRelist[T Object] struct {
	w      *StoreWriter[T]
	listed map[string]struct{}
	ended  bool
}

// Apply stores each item (Store.Update). An item that cannot be keyed or
// stored is skipped, and reported in an error wrapping a *SkippedError.
func (s *storeRelist[T]) Apply(items []T) error {
	if s.ended {
		return fmt.Errorf("cache: relist: %w", ErrRelistEnded)
	}
	var skipped []error
	for i, obj := range items {
		key, err := s.key(obj)
		if err == nil {
			err = s.w.store.Update(obj)
		}
		if err != nil {
			skipped = append(skipped, itemError(i, obj, err))
			continue
		}
		s.listed[key] = struct{}{}
	}
	if len(skipped) > 0 {
		return fmt.Errorf("cache: relist: %w", &SkippedError{Errs: skipped, Total: len(items)})
	}
	return nil
}

func (s *storeRelist[T]) key(obj T) (string, error) {
	if isNil(obj) {
		return "", fmt.Errorf("%w: nil %T", ErrInvalidObject, obj)
	}
	key, err := s.w.keyFunc(obj)
	if err != nil {
		return "", fmt.Errorf("computing key: %w", err)
	}
	return key, nil
}

// Delete removes obj's key, which then counts as not listed.
func (s *storeRelist[T]) Delete(obj T) error {
	if s.ended {
		return fmt.Errorf("cache: relist: %w", ErrRelistEnded)
	}
	key, err := s.key(obj)
	if err != nil {
		return fmt.Errorf("cache: relist: delete: %w", err)
	}
	delete(s.listed, key)
	return s.w.store.Delete(obj)
}

// Finish deletes every stored key the relist did not name; the store then
// reflects resourceVersion. It returns the first failed deletion, having
// tried them all.
func (s *storeRelist[T]) Finish(resourceVersion string) error {
	if s.ended {
		return fmt.Errorf("cache: relist: %w", ErrRelistEnded)
	}
	listed := s.listed
	s.end()
	var first error
	for _, key := range s.w.store.ListKeys() {
		if _, ok := listed[key]; ok {
			continue
		}
		obj, exists, err := s.w.store.GetByKey(key)
		if err == nil && exists {
			err = s.w.store.Delete(obj)
		}
		if err != nil && first == nil {
			first = fmt.Errorf("cache: relist: delete %q: %w", key, err)
		}
	}
	s.w.at(resourceVersion, true)
	return first
}

// Abort ends the relist; what it stored stays.
func (s *storeRelist[T]) Abort() {
	if !s.ended {
		s.end()
	}
}

func (s *storeRelist[T]) end() {
	s.ended = true
	s.listed = nil
	s.w.mu.Lock()
	s.w.relisting = false
	s.w.mu.Unlock()
}

package cache

import "fmt"

// A RelistSession is one relist in progress (Writer.BeginRelist): the
// listed items arrive in pieces and are applied as they come.
type RelistSession[T Object] interface {
	// Apply applies listed items now: each as Replace would. An error
	// wrapping ErrSkipped means the others were applied. It keeps the
	// objects, not the slice: the caller may reuse it.
	Apply(items []T) error
	// Delete applies the deletion of obj seen while listing (a streaming
	// list's DELETED event): obj's key counts as not listed.
	Delete(obj T) error
	// Finish ends the relist at resourceVersion, the version the list
	// was served at: every key known before or during it and not listed
	// is deleted with its final state unknown, as Replace deletes them,
	// and the writer is then at resourceVersion.
	Finish(resourceVersion string) error
	// Abort ends the relist without deleting anything: what was applied
	// stays (it is the listed state, newer than what it replaced).
	Abort()
}

// BeginRelist starts an incremental relist, once the queue has been
// written to: the first list goes through Replace, which marks its
// entries initial for HasSynced and fills an empty queue in bulk.
//
// While the relist runs, Pop goes on: listed items reach KnownObjects as
// they arrive, so a reader of the cache sees, key by key, either the old
// object or the listed one, and objects missing from the list until
// Finish. Handlers get the notifications a Replace of the same items
// would give, spread over the relist instead of after it. The version
// the queue reaches (Reached) stays the one before the relist until the
// entries queued up to Finish, the inferred deletions included, are
// processed: only then does the cache reflect the list.
func (f *DeltaFIFO[T]) BeginRelist() (RelistSession[T], bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.populated || f.closed {
		return nil, false
	}
	if !f.relisting.CompareAndSwap(false, true) {
		return nil, false
	}
	return &fifoRelist[T]{f: f}, true
}

// knownLenLocked returns how many objects KnownObjects holds, 0 without
// it: what a relist is likely to list, so that its set of listed keys is
// made that size at once instead of growing (each growth leaves the
// previous table behind as garbage, on a heap that holds the cache).
func (f *DeltaFIFO[T]) knownLenLocked() int {
	if f.known == nil {
		return 0
	}
	return f.known.Len()
}

// fifoRelist is a DeltaFIFO's relist in progress. listed holds the keys
// seen so far: a string per key, where a Replace holds the key and the
// object of every item. It is made on the first listed item (listLocked),
// not by BeginRelist: a reflector begins a relist for every attempt to
// list, and while the server is down every attempt fails before its first
// item, each leaving a table the size of the cache behind as garbage.
type fifoRelist[T Object] struct {
	f      *DeltaFIFO[T]
	listed map[string]struct{}
	ended  bool
}

// listLocked records key as listed; f.mu is held.
func (s *fifoRelist[T]) listLocked(key string) {
	if s.listed == nil {
		s.listed = make(map[string]struct{}, max(s.f.knownLenLocked(), 1))
	}
	s.listed[key] = struct{}{}
}

func (s *fifoRelist[T]) Apply(items []T) error {
	if s.ended {
		return fmt.Errorf("cache: relist: %w", ErrRelistEnded)
	}
	f := s.f
	if len(items) == 1 {
		return s.applyOne(items[0])
	}
	objs, keys, skipped := f.prepareList(items)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("cache: relist: %w", ErrClosed)
	}
	f.spillLocked()
	for i, key := range keys {
		s.listLocked(key)
		f.queueLocked(key, Delta[T]{Type: f.replaceType, Object: objs[i]})
	}
	if len(skipped) > 0 {
		return fmt.Errorf("cache: relist: %w", &SkippedError{Errs: skipped, Total: len(items)})
	}
	return nil
}

// applyOne is Apply of one item, as a streaming list applies each of its
// events: keyed alone, without the slice of keys and the shared key
// buffer prepareList makes for a page (garbage per listed object, on a
// heap that holds the cache: BenchmarkDeltaFIFORelistUnchanged100k).
func (s *fifoRelist[T]) applyOne(item T) error {
	f := s.f
	obj, key, err := f.prepare(item)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("cache: relist: %w", ErrClosed)
	}
	f.spillLocked()
	if err != nil {
		return fmt.Errorf("cache: relist: %w", &SkippedError{Errs: []error{itemError(0, item, err)}, Total: 1})
	}
	s.listLocked(key)
	f.queueLocked(key, Delta[T]{Type: f.replaceType, Object: obj})
	return nil
}

func (s *fifoRelist[T]) Delete(obj T) error {
	if s.ended {
		return fmt.Errorf("cache: relist: %w", ErrRelistEnded)
	}
	_, key, err := s.f.prepare(obj)
	if err != nil {
		return fmt.Errorf("cache: relist: delete: %w", err)
	}
	delete(s.listed, key)
	// Unmarked: the cache reflects no version of its own until Finish.
	return s.f.write("delete", Deleted, obj, false)
}

func (s *fifoRelist[T]) Finish(resourceVersion string) error {
	if s.ended {
		return fmt.Errorf("cache: relist: %w", ErrRelistEnded)
	}
	listed := s.listed
	s.end()
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("cache: relist: %w", ErrClosed)
	}
	f.spillLocked()
	f.inferDeletionsLocked(listed)
	f.markLocked(resourceVersion)
	return nil
}

func (s *fifoRelist[T]) Abort() {
	if !s.ended {
		s.end()
	}
}

func (s *fifoRelist[T]) end() {
	s.ended = true
	s.listed = nil
	s.f.relisting.Store(false)
}

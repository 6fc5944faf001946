package cache

import (
	"context"
	"errors"
	"fmt"
)

// FIFOOptions configures NewFIFO. The zero value keys by MetaNamespaceKey.
type FIFOOptions[T Object] struct {
	// KeyFunc computes the key of each object. Default MetaNamespaceKey.
	KeyFunc KeyFunc[T]
}

// FIFO is a keyed first-in first-out queue holding the latest state of each
// object: Add and Update of a queued key replace its object and keep its
// place; Delete removes it from the queue. Use it where only the newest
// state matters; DeltaFIFO keeps every change instead.
//
// Every method is safe for concurrent use; Pop calls are serialized, with
// process run without the queue's lock held. Objects are shared and must
// not be mutated. The zero FIFO is not usable: create one with NewFIFO.
type FIFO[T Object] struct {
	keyFunc KeyFunc[T] // set by NewFIFO, then read-only

	queueState // mu guards the fields below

	// items holds the queued objects. queue holds one slot per Add of a
	// key not yet queued; a slot whose seq no longer matches its item's is
	// stale (the key was deleted, maybe re-added) and is skipped by Pop.
	items map[string]fifoItem[T]
	queue ring[fifoSlot]
	seq   uint64 // last sequence number handed out
	stale int    // stale slots in queue
}

type fifoItem[T Object] struct {
	obj     T
	seq     uint64
	initial bool // queued by the first Replace
}

type fifoSlot struct {
	key string
	seq uint64
}

var _ Store[Object] = (*FIFO[Object])(nil)

// NewFIFO returns an empty, open FIFO.
func NewFIFO[T Object](opts FIFOOptions[T]) *FIFO[T] {
	f := &FIFO[T]{keyFunc: opts.KeyFunc, queueState: newQueueState(), items: make(map[string]fifoItem[T])}
	if f.keyFunc == nil {
		f.keyFunc = MetaNamespaceKey[T]
	}
	return f
}

func (f *FIFO[T]) keyOf(op string, obj T) (string, error) {
	if isNil(obj) {
		return "", fmt.Errorf("cache: %s: %w: nil %T", op, ErrInvalidObject, obj)
	}
	key, err := f.keyFunc(obj)
	if err != nil {
		return "", keyFuncError(op, err)
	}
	return key, nil
}

// Add queues obj, or replaces the queued object under its key in place.
func (f *FIFO[T]) Add(obj T) error { return f.put("add", obj) }

// Update is the same as Add.
func (f *FIFO[T]) Update(obj T) error { return f.put("update", obj) }

func (f *FIFO[T]) put(op string, obj T) error {
	key, err := f.keyOf(op, obj)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.writableLocked(op); err != nil {
		return err
	}
	f.putLocked(key, obj, false)
	return nil
}

// putLocked stores obj under key, queueing key if it is not queued.
func (f *FIFO[T]) putLocked(key string, obj T, initial bool) {
	if it, queued := f.items[key]; queued {
		it.obj = obj
		f.items[key] = it
		return
	}
	f.seq++
	f.items[key] = fifoItem[T]{obj: obj, seq: f.seq, initial: initial}
	f.queue.push(fifoSlot{key: key, seq: f.seq})
	f.signalLocked()
}

// Delete removes obj's key from the queue, if queued.
func (f *FIFO[T]) Delete(obj T) error {
	key, err := f.keyOf("delete", obj)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.writableLocked("delete"); err != nil {
		return err
	}
	it, queued := f.items[key]
	if !queued {
		return nil
	}
	delete(f.items, key)
	if it.initial {
		f.initialDoneLocked() // nothing left to process for it
	}
	f.stale++
	if f.stale > 64 && f.stale > f.queue.len()/2 {
		f.compactLocked()
	}
	return nil
}

// compactLocked drops the stale slots from queue.
func (f *FIFO[T]) compactLocked() {
	f.queue.filter(func(s fifoSlot) bool {
		it, ok := f.items[s.key]
		return ok && it.seq == s.seq
	})
	f.stale = 0
}

// Replace swaps the queue's content for items, queued in their order (a
// repeated key keeps its first place and its last object). Every item is
// keyed first: if any fails, Replace returns the error and the queue is
// unchanged. If this is the first write, HasSynced turns true once every
// item has been popped and processed.
func (f *FIFO[T]) Replace(items []T) error {
	keys := make([]string, len(items))
	for i, obj := range items {
		key, err := f.keyOf("replace", obj)
		if err != nil {
			return err
		}
		keys[i] = key
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("cache: replace: %w", ErrClosed)
	}
	first := !f.populated // then setInitialLocked marks it populated
	// Initial objects not yet processed stay initial if relisted, and are
	// done otherwise, so HasSynced neither sticks nor turns true early.
	var pending map[string]bool
	if f.initialCount > 0 {
		pending = make(map[string]bool, f.initialCount)
		for key, it := range f.items {
			if it.initial {
				pending[key] = true
			}
		}
	}
	clear(f.items)
	f.queue.filter(func(fifoSlot) bool { return false })
	f.stale = 0
	for i, key := range keys {
		f.putLocked(key, items[i], first || pending[key])
		delete(pending, key)
	}
	for range pending {
		f.initialDoneLocked()
	}
	if first {
		f.setInitialLocked(len(f.items))
	}
	return nil
}

// Pop waits for a queued key, removes it, and calls process with its
// object; isInInitialList is true for objects queued by the first Replace.
// It returns the object and process's error. If that error wraps
// ErrRequeue, the object is queued again at the back, unless a newer object
// was queued for its key meanwhile (the newer state wins). Any other error
// drops it.
//
// Pop returns ctx.Err() if ctx is done before a key is taken, and an error
// matching ErrClosed once the queue is closed. Concurrent Pops are
// serialized. process must not call Pop.
func (f *FIFO[T]) Pop(ctx context.Context, process func(obj T, isInInitialList bool) error) (T, error) {
	f.mu.Lock()
	ready := func() bool {
		for f.queue.len() > 0 {
			s := *f.queue.at(0)
			if it, ok := f.items[s.key]; ok && it.seq == s.seq {
				return true
			}
			f.queue.pop()
			f.stale--
		}
		return false
	}
	if err := f.waitTurnLocked(ctx, ready); err != nil {
		f.mu.Unlock()
		var zero T
		return zero, err
	}
	s := f.queue.pop()
	it := f.items[s.key]
	delete(f.items, s.key)
	f.mu.Unlock()

	var err error
	defer func() { f.finishPop(s.key, it, err) }() // also runs if process panics
	err = process(it.obj, it.initial)
	return it.obj, err
}

func (f *FIFO[T]) finishPop(key string, it fifoItem[T], err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, queued := f.items[key]; err != nil && errors.Is(err, ErrRequeue) && !queued {
		f.seq++
		it.seq = f.seq
		f.items[key] = it
		f.queue.push(fifoSlot{key: key, seq: it.seq})
	} else if it.initial {
		f.initialDoneLocked()
	}
	f.endTurnLocked(len(f.items) > 0)
}

// Len returns the number of queued keys.
func (f *FIFO[T]) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.items)
}

// List returns the queued objects in queue order.
func (f *FIFO[T]) List() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]T, 0, len(f.items))
	f.eachLocked(func(key string, it fifoItem[T]) { out = append(out, it.obj) })
	return out
}

// ListKeys returns the queued keys in queue order.
func (f *FIFO[T]) ListKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.items))
	f.eachLocked(func(key string, _ fifoItem[T]) { out = append(out, key) })
	return out
}

func (f *FIFO[T]) eachLocked(fn func(key string, it fifoItem[T])) {
	f.queue.each(func(s fifoSlot) {
		if it, ok := f.items[s.key]; ok && it.seq == s.seq {
			fn(s.key, it)
		}
	})
}

// Get returns the object queued under obj's key.
func (f *FIFO[T]) Get(obj T) (item T, exists bool, err error) {
	key, err := f.keyOf("get", obj)
	if err != nil {
		return item, false, err
	}
	return f.GetByKey(key)
}

// GetByKey returns the object queued under key.
func (f *FIFO[T]) GetByKey(key string) (item T, exists bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	it, ok := f.items[key]
	return it.obj, ok, nil
}

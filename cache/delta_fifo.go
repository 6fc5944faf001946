package cache

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/kinformer/kinformer/internal/keyindex"
)

// KnownObjects is what a DeltaFIFO needs to know about the objects already
// processed downstream (normally the informer's Indexer, which implements
// it): which keys exist, the last known state of each, and how many there
// are. The DeltaFIFO calls it with its own lock held, so it must not call
// back into the queue.
type KnownObjects[T Object] interface {
	// ListKeys returns every key, in any order.
	ListKeys() []string
	// GetByKey returns the object under key.
	GetByKey(key string) (item T, exists bool, err error)
	// Len returns the number of keys ListKeys would return, without
	// listing them.
	Len() int
}

// DeltaFIFOOptions configures NewDeltaFIFO. The zero value is a queue keyed
// by MetaNamespaceKey with no known objects, emitting Replaced on Replace.
type DeltaFIFOOptions[T Object] struct {
	// KeyFunc computes the key of each object. Default MetaNamespaceKey.
	KeyFunc KeyFunc[T]
	// KnownObjects lists the objects already processed downstream
	// (normally the informer's Indexer). It lets Replace infer deletions
	// of objects no longer queued, Delete recognise known objects, and
	// Resync re-deliver them. May be nil.
	KnownObjects KnownObjects[T]
	// ReplaceEmitsSync makes Replace queue Sync deltas for the listed
	// objects instead of Replaced.
	ReplaceEmitsSync bool
	// Transform, when set, is applied to every object given to Add, Update,
	// Delete and Replace before it is keyed and queued (objects read back
	// from KnownObjects or from the queue have been transformed already).
	// An error rejects the object: Add, Update and Delete return it and
	// leave the queue unchanged; Replace skips that one object (see
	// Replace). It must not mutate its argument in a way other holders of
	// that object could see.
	Transform func(T) (T, error)
}

// DeltaFIFO is the queue between a reflector and the code that applies its
// changes: a first-in first-out queue of keys, each with the Deltas that
// arrived for it since it was last popped.
//
// Rules. Deltas for a key are kept in arrival order, and a key keeps its
// place in the queue while more deltas arrive for it. Two consecutive
// Deleted deltas collapse into one, keeping the one whose final state is
// known. Delete of a key that is neither queued, being processed, nor in
// KnownObjects is dropped (the deletion was already reported). Replace
// queues a Replaced (or Sync) delta per listed object, then a Deleted delta
// with StateUnknown for every key that is known but missing from the list —
// known meaning queued, being processed, or in KnownObjects — carrying the
// newest state known: the newest queued delta's object, else the one being
// processed, else KnownObjects' object. Keys newly queued by those inferred
// deletions (and by Resync) enter the queue in no particular order. An
// item Replace cannot key or transform is skipped and reported (see
// Replace). Resync queues a Sync delta for every KnownObjects object whose
// key is neither queued nor being processed.
//
// Concurrency. Every method is safe for concurrent use. Pop calls are
// serialized: one key is processed at a time, and process runs without the
// queue's lock held, so writers are not blocked by processing. The key
// being processed counts as known with the state its deltas lead to, which
// keeps Replace, Delete and Resync correct while process is still applying
// them downstream. Lock order: the queue's lock, then KnownObjects' own;
// KnownObjects must not call back into the queue.
//
// Memory. A Replace into an empty queue (the usual first list) is held as
// two slices, not a map, until another write arrives; the deltas popped
// from it are carved from one array, which lives as long as any of them.
// No caller can tell: reads (Len, ListKeys, GetByKey) answer from the
// slices without moving them, and a list that names a key twice is queued
// the general way. Once a backlog of more than 1,024 keys has drained,
// the queue reallocates its map and key queue, since Go maps never shrink.
//
// Versions. Every write carries the resource version the source is at
// after it (see Writer), and the queue records it with what it queues: a
// Mark of the position and the version. Reached is the newest mark all of
// whose entries have been popped and processed, so "the consumer's state
// reflects version V" is read off the queue, not rebuilt from counters.
//
// Objects in deltas are shared; they must not be mutated. The zero
// DeltaFIFO is not usable: create one with NewDeltaFIFO. HasSynced, Close
// and IsClosed are documented on the queue state it embeds.
type DeltaFIFO[T Object] struct {
	// Set by NewDeltaFIFO, then read-only.
	keyFunc     KeyFunc[T]
	defaultKey  bool // keyFunc is MetaNamespaceKey, by default
	known       KnownObjects[T]
	replaceType DeltaType
	transform   func(T) (T, error)

	queueState // mu guards the fields below

	// items holds the deltas of every queued key; queue orders the keys.
	// A key is in queue exactly when it is in items.
	items map[string]fifoEntry[T]
	queue keyQueue
	// grown is the most entries items has held since it was allocated
	// (releaseIfDrainedLocked).
	grown int
	// bulkKeys and bulkDeltas hold, in queue order, the distinct keys of a
	// Replace into an empty queue and their one delta each
	// (replaceIntoEmptyLocked), kept out of items and queue: a list of n
	// objects then costs no map of n entries. The entries from bulkNext on
	// are queued ahead of everything else, and while any remain, items and
	// queue are empty: every write first moves them there (spillLocked);
	// Pop and the reads use them in place. bulkIndex finds a key among
	// bulkKeys; bulkInitial marks the entries initial.
	// bulkSeq is the seq of bulkKeys[0]; the others follow in order.
	bulkKeys    []string
	bulkDeltas  []Delta[T]
	bulkNext    int
	bulkIndex   keyindex.Index
	bulkInitial bool
	bulkSeq     uint64
	// While a Pop processes (queueState.popping), inflight holds the
	// deltas it popped under inflightKey, from the entry inflightSeq.
	inflightKey string
	inflight    Deltas[T]
	inflightSeq uint64
	// versions holds the marks of the writes (watermark.go).
	versions watermarks
	// relisting is set while a relist session is open (BeginRelist).
	relisting atomic.Bool
}

var _ Writer[Object] = (*DeltaFIFO[Object])(nil)

type fifoEntry[T Object] struct {
	deltas Deltas[T]
	// seq numbers the entry: entries are numbered from 1 as they enter
	// the queue, and one re-queued keeps its number (see requeued).
	seq uint64
	// initial marks an entry queued by the first Replace.
	initial bool
	// requeued marks an entry put back by finishPop: its seq may be below
	// that of entries queued ahead of it (watermarks.requeued counts them).
	requeued bool
}

// NewDeltaFIFO returns an empty, open DeltaFIFO.
func NewDeltaFIFO[T Object](opts DeltaFIFOOptions[T]) *DeltaFIFO[T] {
	f := &DeltaFIFO[T]{
		keyFunc:     opts.KeyFunc,
		known:       opts.KnownObjects,
		replaceType: Replaced,
		transform:   opts.Transform,
		queueState:  newQueueState(),
		items:       make(map[string]fifoEntry[T]),
	}
	if f.keyFunc == nil {
		f.keyFunc, f.defaultKey = MetaNamespaceKey[T], true
	}
	if opts.ReplaceEmitsSync {
		f.replaceType = Sync
	}
	return f
}

// KeyOf returns the key obj is queued under.
func (f *DeltaFIFO[T]) KeyOf(obj T) (string, error) {
	if isNil(obj) {
		return "", fmt.Errorf("cache: %w: nil %T", ErrInvalidObject, obj)
	}
	key, err := f.keyFunc(obj)
	if err != nil {
		return "", keyFuncError("key of", err)
	}
	return key, nil
}

// prepare transforms and keys an object given to a write. Its errors do
// not name the operation.
func (f *DeltaFIFO[T]) prepare(obj T) (T, string, error) {
	obj, err := f.transformed(obj)
	if err != nil {
		return obj, "", err
	}
	key, err := f.keyFunc(obj)
	if err != nil {
		return obj, "", fmt.Errorf("computing key: %w", err)
	}
	return obj, key, nil
}

// transformed is the first half of prepare: the nil check and the
// transform.
func (f *DeltaFIFO[T]) transformed(obj T) (T, error) {
	if isNil(obj) {
		return obj, fmt.Errorf("%w: nil %T", ErrInvalidObject, obj)
	}
	if f.transform != nil {
		t, err := f.transform(obj)
		if err != nil {
			return obj, fmt.Errorf("transform: %w", err)
		}
		if isNil(t) {
			return obj, fmt.Errorf("transform returned %w: nil %T", ErrInvalidObject, t)
		}
		obj = t
	}
	return obj, nil
}

// Add queues an Added delta for obj.
func (f *DeltaFIFO[T]) Add(obj T) error { return f.write("add", Added, obj, true) }

// Update queues an Updated delta for obj.
func (f *DeltaFIFO[T]) Update(obj T) error { return f.write("update", Updated, obj, true) }

// Delete queues a Deleted delta for obj, unless obj's key is neither
// queued, being processed, nor in KnownObjects: then the deletion was
// already reported and Delete does nothing.
func (f *DeltaFIFO[T]) Delete(obj T) error { return f.write("delete", Deleted, obj, true) }

// write queues a delta of type t for obj and, when mark is set, marks the
// queue with obj's resource version (read before Transform). An object
// the queue cannot take is not queued, but its version is marked all the
// same: the source will not send that change again, so the consumer is as
// far as it will ever get with it once what came before is processed.
func (f *DeltaFIFO[T]) write(op string, t DeltaType, obj T, mark bool) error {
	rv := ""
	if mark && !isNil(obj) {
		rv = obj.GetResourceVersion()
	}
	obj, key, err := f.prepare(obj)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		if !f.closed {
			f.markLocked(rv)
		}
		return fmt.Errorf("cache: %s: %w", op, err)
	}
	if err := f.writableLocked(op); err != nil {
		return err
	}
	f.spillLocked()
	if t != Deleted || f.existsLocked(key) {
		f.queueLocked(key, Delta[T]{Type: t, Object: obj})
	}
	f.markLocked(rv)
	return nil
}

// existsLocked reports whether the object under key exists as far as the
// queue and downstream know, once everything queued is processed.
func (f *DeltaFIFO[T]) existsLocked(key string) bool {
	if _, queued := f.items[key]; queued {
		return true
	}
	if f.popping && key == f.inflightKey {
		newest, _ := f.inflight.Newest()
		return newest.Type != Deleted
	}
	if f.known == nil {
		return false
	}
	_, exists, err := f.known.GetByKey(key)
	return exists || err != nil // when in doubt, report the deletion
}

// queueLocked appends d to key's deltas, queueing key if it is new.
func (f *DeltaFIFO[T]) queueLocked(key string, d Delta[T]) {
	e, queued := f.items[key]
	e.deltas = appendDelta(e.deltas, d)
	if !queued {
		e.seq = f.versions.next()
	}
	f.items[key] = e
	if !queued {
		f.queue.push(key)
		f.grown = max(f.grown, len(f.items))
		f.signalLocked()
	}
}

// shrinkThreshold is the number of entries past which a drained queue
// gives its storage back: Go maps never shrink, so after a 100,000-object
// initial list the items map would otherwise keep its buckets for good.
const shrinkThreshold = 1024

// releaseIfDrainedLocked reallocates items and the key queue once the
// queue is empty and they had grown past shrinkThreshold. It costs a
// comparison per Pop, and an allocation only after a large backlog.
func (f *DeltaFIFO[T]) releaseIfDrainedLocked() {
	if f.queue.len() > 0 || f.grown <= shrinkThreshold {
		return
	}
	f.items = make(map[string]fifoEntry[T])
	f.queue.release()
	f.grown = 0
}

// Replace queues a Replaced delta (Sync with ReplaceEmitsSync) for every
// item, then a Deleted delta with StateUnknown for every known key missing
// from items (see the type's rules). If this is the first write to the
// queue, HasSynced turns true once every key it queued has been popped and
// processed. The queue reaches resourceVersion (Reached) once every entry
// queued up to the end of Replace, the inferred deletions included, has
// been processed.
//
// An item that cannot be queued (nil, rejected by Transform, or whose key
// cannot be computed) is skipped, as if it were not in the list, and every
// other item is applied as usual. Replace then returns an error wrapping a
// *SkippedError, which matches ErrSkipped and holds each skipped item's
// error: Replace did its job for the rest, and the caller should report the
// error, not retry. On a closed queue it returns an error matching
// ErrClosed and changes nothing.
func (f *DeltaFIFO[T]) Replace(items []T, resourceVersion string) error {
	objs, keys, skipped := f.prepareList(items)

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("cache: replace: %w", ErrClosed)
	}
	f.replaceLocked(keys, objs)
	f.markLocked(resourceVersion)
	if len(skipped) > 0 {
		return fmt.Errorf("cache: replace: %w", &SkippedError{Errs: skipped, Total: len(items)})
	}
	return nil
}

// replaceLocked is Replace once every object is prepared: objs and their
// keys.
func (f *DeltaFIFO[T]) replaceLocked(keys []string, objs []T) {
	first := !f.populated // then setInitialLocked marks it populated
	f.spillLocked()
	if f.nothingKnownLocked() && f.replaceIntoEmptyLocked(keys, objs, first) {
		return
	}
	listed := make(map[string]struct{}, len(keys))
	for i, key := range keys {
		listed[key] = struct{}{}
		f.queueLocked(key, Delta[T]{Type: f.replaceType, Object: objs[i]})
	}
	f.inferDeletionsLocked(listed)
	if first {
		for key, e := range f.items {
			e.initial = true
			f.items[key] = e
		}
		f.setInitialLocked(len(f.items))
	}
}

// nothingKnownLocked reports whether no key is known: none queued, none
// being processed, none in KnownObjects. A Replace then has no deletion to
// infer.
func (f *DeltaFIFO[T]) nothingKnownLocked() bool {
	if f.queuedLocked() > 0 || f.popping {
		return false
	}
	return f.known == nil || f.known.Len() == 0
}

// queuedLocked returns the number of queued keys.
func (f *DeltaFIFO[T]) queuedLocked() int {
	return f.queue.len() + len(f.bulkKeys) - f.bulkNext
}

// inferDeletionsLocked queues a Deleted delta with StateUnknown for every
// known key not in listed.
func (f *DeltaFIFO[T]) inferDeletionsLocked(listed map[string]struct{}) {
	tombstone := func(key string, last T) {
		f.queueLocked(key, Delta[T]{Type: Deleted, Object: last, StateUnknown: true})
	}
	// Queued keys: the newest queued state is the last known one. A key
	// whose newest delta is a deletion gets a second one, which collapses.
	for key, e := range f.items {
		if _, ok := listed[key]; ok {
			continue
		}
		newest, _ := e.deltas.Newest()
		tombstone(key, newest.Object)
	}
	// The key being processed: its deltas say whether it will exist.
	if f.popping {
		key := f.inflightKey
		_, queued := f.items[key]
		_, ok := listed[key]
		if newest, _ := f.inflight.Newest(); !queued && !ok && newest.Type != Deleted {
			tombstone(key, newest.Object)
		}
	}
	if f.known == nil || f.knownAllListedLocked(listed) {
		return
	}
	for _, key := range f.known.ListKeys() {
		if _, ok := listed[key]; ok {
			continue
		}
		if _, queued := f.items[key]; queued || (f.popping && key == f.inflightKey) {
			continue // handled above
		}
		last, exists, err := f.known.GetByKey(key)
		if err != nil || !exists {
			continue // gone meanwhile: nothing left to delete
		}
		tombstone(key, last)
	}
}

// knownAllListedLocked reports whether every KnownObjects key is in
// listed, by looking the listed keys up instead of listing the known
// ones: a relist that deleted nothing, the usual case, then builds no key
// of the whole cache at its end, when the heap holds both the cache and
// the relist (the warm-restart-view-expired-rss line of
// bench/cmd/controlplane -warm-restart).
//
// The caller holds f.mu, so nothing is popped meanwhile: KnownObjects
// changes only by the deltas being processed, of one key. Without a
// deletion among them that key can only enter it, never leave: then if
// Len, read before and after, equals the number of listed keys found, no
// other key is missing (one that was would leave the count below the
// second Len). With a deletion among them, it answers false.
func (f *DeltaFIFO[T]) knownAllListedLocked(listed map[string]struct{}) bool {
	if f.popping {
		for _, d := range f.inflight {
			if d.Type == Deleted {
				return false
			}
		}
	}
	n := f.known.Len()
	if len(listed) < n {
		return false
	}
	found := 0
	for key := range listed {
		if _, ok, err := f.known.GetByKey(key); err == nil && ok {
			found++
		}
	}
	return found == n && f.known.Len() == n
}

// Resync queues a Sync delta for every KnownObjects object whose key is
// neither queued nor being processed. Without KnownObjects it does nothing.
func (f *DeltaFIFO[T]) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("cache: resync: %w", ErrClosed)
	}
	if f.known == nil {
		return nil
	}
	f.spillLocked()
	for _, key := range f.known.ListKeys() {
		if _, queued := f.items[key]; queued || (f.popping && key == f.inflightKey) {
			continue
		}
		obj, exists, err := f.known.GetByKey(key)
		if err != nil || !exists {
			continue
		}
		f.queueLocked(key, Delta[T]{Type: Sync, Object: obj})
	}
	return nil
}

// Pop waits for a queued key, removes it with its deltas, and calls
// process with the key and the deltas; isInInitialList is true for keys
// queued by the first Replace. It returns the deltas and process's error.
//
// If that error wraps ErrRequeue, the deltas are put back, ahead of any
// deltas that arrived for the key during processing; a key no longer queued
// goes to the back of the queue. Any other error drops them.
//
// Pop returns ctx.Err() if ctx is done before a key is taken, and an error
// matching ErrClosed once the queue is closed (keys still queued are left
// unprocessed). Concurrent Pops are serialized: process is never called
// twice at once. process must not call Pop.
func (f *DeltaFIFO[T]) Pop(ctx context.Context, process func(key string, deltas Deltas[T], isInInitialList bool) error) (Deltas[T], error) {
	f.mu.Lock()
	if err := f.waitTurnLocked(ctx, func() bool { return f.queuedLocked() > 0 }); err != nil {
		f.mu.Unlock()
		return nil, err
	}
	var (
		key string
		e   fifoEntry[T]
	)
	if f.bulkNext < len(f.bulkKeys) {
		key, e = f.popBulkLocked()
	} else {
		key = f.queue.pop()
		e = f.items[key]
		delete(f.items, key)
		if e.requeued {
			f.versions.requeued--
		}
		f.releaseIfDrainedLocked()
	}
	f.inflightKey, f.inflight, f.inflightSeq = key, e.deltas, e.seq
	f.mu.Unlock()

	var err error
	defer func() { f.finishPop(key, e, err) }() // also runs if process panics
	err = process(key, e.deltas, e.initial)
	return e.deltas, err
}

// finishPop ends the processing of e, popped under key: it re-queues e if
// err asks for it, counts it towards HasSynced otherwise, and passes the
// turn on to a waiting Pop.
func (f *DeltaFIFO[T]) finishPop(key string, e fifoEntry[T], err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inflightKey, f.inflight, f.inflightSeq = "", nil, 0
	if err != nil && errors.Is(err, ErrRequeue) {
		f.spillLocked()
		// Copy: the caller of Pop owns e.deltas from now on.
		merged := append(make(Deltas[T], 0, len(e.deltas)+1), e.deltas...)
		cur, queued := f.items[key]
		for _, d := range cur.deltas {
			merged = appendDelta(merged, d)
		}
		// The entry keeps its seq, the older one: the versions marked
		// after it are not reached before its deltas are processed.
		if !cur.requeued {
			f.versions.requeued++
		}
		f.items[key] = fifoEntry[T]{deltas: merged, seq: e.seq, initial: e.initial || cur.initial, requeued: true}
		if !queued {
			f.queue.push(key)
		}
	} else if e.initial {
		f.initialDoneLocked()
	}
	f.endTurnLocked(f.queuedLocked() > 0)
	f.advanceLocked()
}

// Len returns the number of queued keys (not counting one being
// processed).
func (f *DeltaFIFO[T]) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queuedLocked()
}

// ListKeys returns the queued keys in queue order.
func (f *DeltaFIFO[T]) ListKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, f.queuedLocked())
	out = append(out, f.bulkKeys[f.bulkNext:]...)
	f.queue.each(func(key string) { out = append(out, key) })
	return out
}

// GetByKey returns a copy of the deltas queued under key.
func (f *DeltaFIFO[T]) GetByKey(key string) (Deltas[T], bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := f.bulkFindLocked(key); i >= 0 {
		return Deltas[T]{f.bulkDeltas[i]}, true, nil
	}
	e, ok := f.items[key]
	if !ok {
		return nil, false, nil
	}
	return append(Deltas[T](nil), e.deltas...), true, nil
}

package cache

import "github.com/kinformer/kinformer/internal/keyindex"

// This file holds the DeltaFIFO's bulk path: a Replace into a queue that
// knows nothing (the usual first list) is kept as two slices instead of a
// map entry per key, which BenchmarkDeltaFIFOFirstList100k and the
// initial-sync scenario of bench/ measure. None of it is visible to a
// caller: every method answers as the general path would.

// replaceIntoEmptyLocked is Replace when nothing is known: the same
// entries as queueing every item in turn, with no deletion to infer. first
// marks the entries initial. The entries go to bulkKeys and bulkDeltas,
// not items: no map is built unless another write comes before they are
// all popped (spillLocked).
//
// It returns false, having changed nothing, when the list names a key
// twice (no API server sends one): the general path then merges the two
// deltas into one entry.
func (f *DeltaFIFO[T]) replaceIntoEmptyLocked(keys []string, objs []T, first bool) bool {
	index, distinct := keyindex.New(keys)
	if !distinct {
		return false
	}
	if first {
		f.setInitialLocked(len(keys))
	}
	if len(keys) == 0 {
		return true
	}
	deltas := make([]Delta[T], len(keys))
	for i := range keys {
		deltas[i] = Delta[T]{Type: f.replaceType, Object: objs[i]}
	}
	f.bulkKeys, f.bulkDeltas, f.bulkNext, f.bulkIndex, f.bulkInitial = keys, deltas, 0, index, first
	f.bulkSeq = f.versions.next()
	f.versions.seq += uint64(len(keys) - 1)
	f.signalLocked()
	return true
}

// popBulkLocked takes the next bulk entry, which the caller has checked is
// there.
func (f *DeltaFIFO[T]) popBulkLocked() (string, fifoEntry[T]) {
	i := f.bulkNext
	key := f.bulkKeys[i]
	e := fifoEntry[T]{deltas: f.bulkDeltas[i : i+1 : i+1], seq: f.bulkSeq + uint64(i), initial: f.bulkInitial}
	f.bulkNext++
	if f.bulkNext == len(f.bulkKeys) {
		f.dropBulkLocked()
	}
	return key, e
}

// bulkFindLocked returns the position of key among the bulk entries still
// queued, or -1.
func (f *DeltaFIFO[T]) bulkFindLocked(key string) int {
	if f.bulkNext == len(f.bulkKeys) {
		return -1
	}
	if i := f.bulkIndex.Find(key); i >= f.bulkNext {
		return i
	}
	return -1
}

// spillLocked moves the bulk entries still queued into items and queue,
// in order. Nothing else is queued while they remain (every write spills
// first) and their keys are distinct, so each becomes an entry of its own.
func (f *DeltaFIFO[T]) spillLocked() {
	n := len(f.bulkKeys) - f.bulkNext
	if n == 0 {
		return
	}
	if len(f.items) == 0 {
		f.items = make(map[string]fifoEntry[T], n)
	}
	f.queue.reserve(n)
	for i := f.bulkNext; i < len(f.bulkKeys); i++ {
		key := f.bulkKeys[i]
		f.items[key] = fifoEntry[T]{deltas: f.bulkDeltas[i : i+1 : i+1], seq: f.bulkSeq + uint64(i), initial: f.bulkInitial}
		f.queue.push(key)
	}
	f.grown = max(f.grown, len(f.items))
	f.dropBulkLocked()
}

// dropBulkLocked forgets the bulk entries.
func (f *DeltaFIFO[T]) dropBulkLocked() {
	f.bulkKeys, f.bulkDeltas, f.bulkNext, f.bulkIndex = nil, nil, 0, keyindex.Index{}
}

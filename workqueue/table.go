package workqueue

import "hash/maphash"

// table tracks the items a queue knows about (waiting or held) and their
// state. It replaces the two Go maps a work queue usually keeps (dirty and
// processing) with one open-addressing index over an arena of entries, so
// that:
//
//   - an item is hashed once per Add and once per Done, and never on Get:
//     the ready line holds arena indices, which stay valid while the entry
//     lives, so handing out an item is a slice read;
//   - the ready line holds 4-byte indices with no pointers for the garbage
//     collector to scan;
//   - memory is given back after a burst (Go maps never shrink).
//
// Slots use linear probing with backward-shift deletion (no tombstones), at
// most half full. The zero value is not usable; call init. It is not safe
// for concurrent use; the queue guards it with its lock.
type table[T comparable] struct {
	seed maphash.Seed
	// entries is the arena. An index stays valid until remove; freed
	// indices are listed in free and reused.
	entries []entry[T]
	free    []int32
	// slots holds entry index + 1 (0 for empty); its length is zero or a
	// power of two.
	slots []int32
	// n counts live entries.
	n int
	// times, parallel to entries, holds each entry's timings when the
	// queue reports metrics (timed); nil otherwise.
	times []entryTimes
	timed bool
}

// entryTimes are the moments, as offsets from Queue.epoch on the queue's
// clock plus 1ns, that an item started waiting (added) and that a worker
// took it (started). Zero means "not now".
type entryTimes struct {
	added, started int64
}

// entry is one tracked item.
type entry[T any] struct {
	item T
	hash uint64
	// priority is, by state: the priority of the ready line the item waits
	// in; the priority it was handed out at; the highest priority it was
	// added at again since, which it rejoins a line at after Done.
	priority int
	// pos is the item's position in its ready line's ring while ready.
	pos   uint32
	state entryState
}

// entryState says where a tracked item is.
type entryState uint8

const (
	// stateFree: the arena slot holds no item (the zero value, so that a
	// removed entry reads as free).
	stateFree entryState = iota
	// stateReady: waiting in the ready line of its priority.
	stateReady
	// stateHeld: a worker holds the item.
	stateHeld
	// stateHeldReadded: a worker holds the item and it was added again;
	// it joins the ready line of its priority at Done.
	stateHeldReadded
)

// tableShrinkMin is the slot count below which the table never shrinks, and
// the arena size below which an emptied arena is kept for reuse.
const tableShrinkMin = 1024

func (t *table[T]) init() { t.seed = maphash.MakeSeed() }

// hash returns item's hash. It reads only the seed, which init sets once,
// so it may be called without the queue's lock.
func (t *table[T]) hash(item T) uint64 { return maphash.Comparable(t.seed, item) }

// find returns the arena index of item, or -1 if it is not tracked.
func (t *table[T]) find(item T, h uint64) int32 {
	if len(t.slots) == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return -1
		}
		if e := &t.entries[s-1]; e.hash == h && e.item == item {
			return s - 1
		}
	}
}

// insert tracks item, which must not be tracked yet, in state, and returns
// its arena index. It may move the arena: do not keep entry pointers across
// it.
func (t *table[T]) insert(item T, h uint64, state entryState, priority int) int32 {
	if 2*(t.n+1) > len(t.slots) {
		t.resize(max(16, 2*len(t.slots)))
	}
	var idx int32
	if k := len(t.free); k > 0 {
		idx = t.free[k-1]
		t.free = t.free[:k-1]
	} else {
		idx = int32(len(t.entries))
		t.entries = append(t.entries, entry[T]{})
		if t.timed {
			t.times = append(t.times, entryTimes{})
		}
	}
	t.entries[idx] = entry[T]{item: item, hash: h, state: state, priority: priority}
	t.place(idx)
	t.n++
	return idx
}

// place puts arena index idx in the first free slot of its probe sequence.
func (t *table[T]) place(idx int32) {
	mask := len(t.slots) - 1
	i := int(t.entries[idx].hash) & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = idx + 1
}

// remove stops tracking the entry at arena index idx.
func (t *table[T]) remove(idx int32) {
	mask := len(t.slots) - 1
	i := int(t.entries[idx].hash) & mask
	for t.slots[i] != idx+1 {
		i = (i + 1) & mask
	}
	// Backward shift: pull later entries of the cluster into the hole
	// unless their home slot lies after the hole (cyclically).
	for j := (i + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		home := int(t.entries[t.slots[j]-1].hash) & mask
		if !cyclicallyBetween(i, home, j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = 0
	t.entries[idx] = entry[T]{} // drop the item for the garbage collector
	if t.timed {
		t.times[idx] = entryTimes{}
	}
	t.free = append(t.free, idx)
	t.n--
	switch {
	case t.n == 0 && len(t.entries) > tableShrinkMin:
		t.entries, t.free, t.slots, t.times = nil, nil, nil, nil
	case len(t.slots) > tableShrinkMin && 8*t.n < len(t.slots):
		t.resize(len(t.slots) / 2)
	}
}

// cyclicallyBetween reports whether k lies in (i, j] on the ring of slots.
func cyclicallyBetween(i, k, j int) bool {
	if i <= j {
		return i < k && k <= j
	}
	return i < k || k <= j
}

// resize rebuilds the slots with size entries (a power of two), reusing the
// stored hashes.
func (t *table[T]) resize(size int) {
	old := t.slots
	t.slots = make([]int32, size)
	for _, s := range old {
		if s != 0 {
			t.place(s - 1)
		}
	}
}

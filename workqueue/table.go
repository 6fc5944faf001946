package workqueue

import "hash/maphash"

// table tracks the items a queue knows about (waiting or held) and their
// state. It replaces the two Go maps a work queue usually keeps (dirty and
// processing) with one open-addressing index over an arena of entries, so
// that:
//
//   - an item is hashed once per Add and once per Done, and never on Get:
//     the ready lines hold arena indices, which stay valid while the entry
//     lives, so handing out an item is a slice read;
//   - the ready lines hold 4-byte indices with no pointers for the garbage
//     collector to scan;
//   - the arena grows by chunks of arenaChunk entries, never copied: an
//     append-grown slice would copy each entry about four times on the way
//     to a large burst (append grows large slices by a quarter), which was
//     a quarter of the CPU of adding 300,000 items;
//   - each slot keeps 32 bits of its item's hash beside the arena index, so
//     probing, deleting and resizing read the slots alone: a lookup in a
//     queue too large for the CPU's caches costs one miss in the slots and
//     one in the arena for the match, where a Go map of strings costs a
//     similar two and the entry-hash layout cost one per probed entry
//     (measured by the "workqueue" scenario of bench/, whose queue grows to
//     300,000 items);
//   - memory is given back after a burst (Go maps never shrink), once the
//     table has stayed small for a while (see hiwater).
//
// Slots use linear probing with backward-shift deletion (no tombstones), at
// most three quarters full: a probe reads 8-byte slots, eight to a cache
// line, so the longer runs of a fuller table cost little, while growing
// it less often saves a quarter of the rehashing on the way to a burst. The zero value is not usable; call init. It is not safe
// for concurrent use; the queue guards it with its lock.
type table[T comparable] struct {
	seed maphash.Seed
	// chunks is the arena: entry i is chunks[i/arenaChunk][i%arenaChunk]
	// (see at). An index stays valid until remove; freed indices are
	// listed in free and reused, and size counts the indices ever used.
	chunks []*[arenaChunk]entry[T]
	size   int32
	free   []int32
	// slots is the index; its length is zero or a power of two.
	slots []slot
	// n counts live entries.
	n int
	// peak keeps the table from shrinking while it keeps refilling.
	peak hiwater
	// times, parallel to entries, holds each entry's timings when the
	// queue reports metrics (timed); nil otherwise.
	times []entryTimes
	timed bool
}

// slot is one place of the index: an arena index + 1 (0: empty) and the low
// 32 bits of the item's hash, whose low bits also choose the item's home
// slot.
type slot struct {
	idx  int32
	hash uint32
}

// arenaChunk is the number of entries per chunk of the arena.
const (
	arenaShift = 10
	arenaChunk = 1 << arenaShift
)

// at returns the entry at arena index idx.
func (t *table[T]) at(idx int32) *entry[T] {
	return &t.chunks[idx>>arenaShift][idx&(arenaChunk-1)]
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

// find returns the arena index of item, whose hash is h, or -1 if it is
// not tracked.
func (t *table[T]) find(item T, h uint64) int32 {
	if len(t.slots) == 0 {
		return -1
	}
	mask, tag := uint32(len(t.slots)-1), uint32(h)
	for i := tag & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s.idx == 0 {
			return -1
		}
		if s.hash == tag && t.at(s.idx-1).item == item {
			return s.idx - 1
		}
	}
}

// insert tracks item, whose hash is h and which must not be tracked yet,
// in state, and returns its arena index. It may move the arena: do not keep
// entry pointers across it.
func (t *table[T]) insert(item T, h uint64, state entryState, priority int) int32 {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.resize(max(16, 2*len(t.slots)))
	}
	var idx int32
	if k := len(t.free); k > 0 {
		idx = t.free[k-1]
		t.free = t.free[:k-1]
	} else {
		idx = t.size
		t.size++
		if int(idx)>>arenaShift == len(t.chunks) {
			t.chunks = append(t.chunks, new([arenaChunk]entry[T]))
		}
		if t.timed {
			t.times = append2x(t.times, entryTimes{})
		}
	}
	*t.at(idx) = entry[T]{item: item, state: state, priority: priority}
	t.place(slot{idx: idx + 1, hash: uint32(h)})
	t.n++
	t.peak.up(t.n)
	return idx
}

// place puts s in the first free slot of its probe sequence.
func (t *table[T]) place(s slot) {
	mask := uint32(len(t.slots) - 1)
	i := s.hash & mask
	for t.slots[i].idx != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}

// remove stops tracking the entry at arena index idx, whose item's hash is
// h.
func (t *table[T]) remove(idx int32, h uint64) {
	mask := uint32(len(t.slots) - 1)
	i := uint32(h) & mask
	for t.slots[i].idx != idx+1 {
		i = (i + 1) & mask
	}
	// Backward shift: pull later entries of the cluster into the hole
	// unless their home slot lies after the hole (cyclically).
	for j := (i + 1) & mask; t.slots[j].idx != 0; j = (j + 1) & mask {
		if home := t.slots[j].hash & mask; !cyclicallyBetween(i, home, j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = slot{}
	*t.at(idx) = entry[T]{} // drop the item for the garbage collector
	if t.timed {
		t.times[idx] = entryTimes{}
	}
	t.free = append2x(t.free, idx)
	t.n--
	t.peak.down()
	switch peak := t.peak.get(); {
	case t.n == 0 && int(t.size) > 4*max(tableShrinkMin, peak):
		t.chunks, t.size, t.free, t.slots, t.times = nil, 0, nil, nil, nil
	case len(t.slots) > tableShrinkMin && 8*max(t.n, peak) < len(t.slots):
		t.resize(len(t.slots) / 2)
	}
}

// cyclicallyBetween reports whether k lies in (i, j] on the ring of slots.
func cyclicallyBetween(i, k, j uint32) bool {
	if i <= j {
		return i < k && k <= j
	}
	return i < k || k <= j
}

// resize rebuilds the slots with size places (a power of two), from the
// hashes they keep.
func (t *table[T]) resize(size int) {
	old := t.slots
	t.slots = make([]slot, size)
	for _, s := range old {
		if s.idx != 0 {
			t.place(s)
		}
	}
}

// append2x appends v to s, doubling the capacity when it is full (append
// grows a large slice by only a quarter, copying it more often).
func append2x[S ~[]E, E any](s S, v E) S {
	if len(s) == cap(s) {
		grown := make(S, len(s), max(16, 2*cap(s)))
		copy(grown, s)
		s = grown
	}
	return append(s, v)
}

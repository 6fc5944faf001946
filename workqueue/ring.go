package workqueue

// ring is a FIFO of items backed by a circular slice that doubles when full,
// so pushing and popping allocate nothing once it has reached its working
// size. The zero value is an empty ring. It is not safe for concurrent use;
// the queue guards it with its lock.
//
// Every pushed item gets a position: a counter (modulo 2^32) that the ring
// keeps across growing and shrinking, so the item stays at
// buf[pos&(len(buf)-1)] for as long as it is in the ring. The capacity is
// always zero or a power of two (at most 2^31), which makes that mask exact
// even when the counter wraps. A ready line uses the position to overwrite
// an item in place (see set) when the item moves to another line.
type ring[T any] struct {
	buf  []T
	head uint32 // position of the oldest item
	n    int    // number of items
	// peak keeps the ring from shrinking while it keeps refilling.
	peak hiwater
}

func (r *ring[T]) len() int { return r.n }

// push appends item and returns its position.
func (r *ring[T]) push(item T) uint32 {
	if r.n == len(r.buf) {
		r.resize(max(16, 2*len(r.buf)))
	}
	pos := r.head + uint32(r.n)
	r.buf[pos&uint32(len(r.buf)-1)] = item
	r.n++
	r.peak.up(r.n)
	return pos
}

// pop removes and returns the oldest item. The ring must not be empty.
func (r *ring[T]) pop() T {
	i := r.head & uint32(len(r.buf)-1)
	item := r.buf[i]
	var zero T
	r.buf[i] = zero // drop the reference so the item can be collected
	r.head++
	r.n--
	r.peak.down()
	if len(r.buf) > shrinkMin && 4*max(r.n, r.peak.get()) < len(r.buf) {
		r.resize(len(r.buf) / 2)
	}
	return item
}

// set replaces the item at position pos, which must be in the ring.
func (r *ring[T]) set(pos uint32, item T) { r.buf[pos&uint32(len(r.buf)-1)] = item }

// clear empties the ring, keeping its buffer.
func (r *ring[T]) clear() {
	clear(r.buf)
	r.head, r.n = 0, 0
}

// shrinkMin is the capacity below which a ring never shrinks. Above it, a
// ring halves when it is less than a quarter full and has been for a while
// (see hiwater).
const shrinkMin = 1024

// resize moves the items to a buffer of size slots (a power of two, at
// least r.n), each to the slot its position selects.
func (r *ring[T]) resize(size int) {
	buf := make([]T, size)
	oldMask, newMask := uint32(len(r.buf)-1), uint32(size-1)
	for i := range uint32(r.n) {
		pos := r.head + i
		buf[pos&newMask] = r.buf[pos&oldMask]
	}
	r.buf = buf
}

// remove deletes the first item equal to target, keeping the order of the
// others, and reports whether it found one. It costs O(len) and moves the
// items after target to other positions: use it only on rings whose
// positions nobody keeps (the blocked Gets).
func remove[T comparable](r *ring[T], target T) bool {
	mask := uint32(len(r.buf) - 1)
	for i := range uint32(r.n) {
		if r.buf[(r.head+i)&mask] != target {
			continue
		}
		for j := i; j < uint32(r.n)-1; j++ {
			r.buf[(r.head+j)&mask] = r.buf[(r.head+j+1)&mask]
		}
		var zero T
		r.buf[(r.head+uint32(r.n)-1)&mask] = zero
		r.n--
		return true
	}
	return false
}

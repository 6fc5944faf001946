package workqueue

// ring is a FIFO of items backed by a circular slice that doubles when full,
// so pushing and popping allocate nothing once it has reached its working
// size. The capacity is always zero or a power of two, so positions wrap
// with a mask instead of a division. The zero value is an empty ring. It is not safe for concurrent use;
// the queue guards it with its lock.
type ring[T any] struct {
	buf  []T
	head int // index of the oldest item
	n    int // number of items
}

func (r *ring[T]) len() int { return r.n }

func (r *ring[T]) push(item T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = item
	r.n++
}

// pop removes and returns the oldest item. The ring must not be empty.
func (r *ring[T]) pop() T {
	item := r.buf[r.head]
	var zero T
	r.buf[r.head] = zero // drop the reference so the item can be collected
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	r.maybeShrink()
	return item
}

// grow doubles the capacity (minimum 16), moving the items to the front.
func (r *ring[T]) grow() {
	size := 2 * len(r.buf)
	if size == 0 {
		size = 16
	}
	buf := make([]T, size)
	k := copy(buf, r.buf[r.head:])
	copy(buf[k:], r.buf[:r.head])
	r.buf = buf
	r.head = 0
}

// shrinkMin is the capacity below which a ring never shrinks.
const shrinkMin = 1024

// maybeShrink halves the capacity when the ring is less than a quarter full
// and larger than shrinkMin, so a burst does not pin its memory forever.
func (r *ring[T]) maybeShrink() {
	if len(r.buf) <= shrinkMin || r.n >= len(r.buf)/4 {
		return
	}
	buf := make([]T, len(r.buf)/2)
	for i := range r.n {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf = buf
	r.head = 0
}

// remove deletes the first item equal to target, keeping the order of the
// others, and reports whether it found one. It costs O(len).
func remove[T comparable](r *ring[T], target T) bool {
	for i := range r.n {
		if r.buf[(r.head+i)&(len(r.buf)-1)] != target {
			continue
		}
		for j := i; j < r.n-1; j++ {
			r.buf[(r.head+j)&(len(r.buf)-1)] = r.buf[(r.head+j+1)&(len(r.buf)-1)]
		}
		var zero T
		r.buf[(r.head+r.n-1)&(len(r.buf)-1)] = zero
		r.n--
		return true
	}
	return false
}

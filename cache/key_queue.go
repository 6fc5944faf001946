package cache

// ring is a first-in first-out queue. It grows by doubling and shrinks only
// when its owner calls release, so a queue in steady state allocates
// nothing per operation. The zero value is an empty queue. It is not safe for concurrent use; its
// owner's lock guards it.
type ring[E any] struct {
	buf  []E // len(buf) is the capacity: zero or a power of two
	head int // index of the oldest element
	n    int // number of elements queued
}

// keyQueue is the queue of keys both FIFOs keep.
type keyQueue = ring[string]

func (q *ring[E]) len() int { return q.n }

func (q *ring[E]) at(i int) *E { return &q.buf[(q.head+i)&(len(q.buf)-1)] }

func (q *ring[E]) push(e E) {
	if q.n == len(q.buf) {
		q.grow()
	}
	*q.at(q.n) = e
	q.n++
}

// pop removes and returns the oldest element. The queue must not be empty.
func (q *ring[E]) pop() E {
	var zero E
	p := q.at(0)
	e := *p
	*p = zero // let the element's memory go
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return e
}

// each calls fn with every element, oldest first.
func (q *ring[E]) each(fn func(e E)) {
	for i := range q.n {
		fn(*q.at(i))
	}
}

// filter keeps only the elements for which keep returns true, in order.
func (q *ring[E]) filter(keep func(e E) bool) {
	var zero E
	n, out := q.n, 0
	for i := range n {
		if e := *q.at(i); keep(e) {
			*q.at(out) = e
			out++
		}
	}
	for i := out; i < n; i++ {
		*q.at(i) = zero
	}
	q.n = out
}

func (q *ring[E]) grow() { q.resize(max(2*len(q.buf), 16)) }

// resize moves the elements to a new array of size elements, a power of
// two no smaller than q.n.
func (q *ring[E]) resize(size int) {
	buf := make([]E, size)
	for i := range q.n {
		buf[i] = *q.at(i)
	}
	q.buf, q.head = buf, 0
}

// reserve makes room for n more elements without further growth.
func (q *ring[E]) reserve(n int) {
	size := max(len(q.buf), 16)
	for size < q.n+n {
		size *= 2
	}
	if size > len(q.buf) {
		q.resize(size)
	}
}

// release drops the backing array of an empty queue, if it has grown past
// the initial size, so that its memory can be reclaimed.
func (q *ring[E]) release() {
	if q.n == 0 && len(q.buf) > 16 {
		q.buf, q.head = nil, 0
	}
}

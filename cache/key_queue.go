package cache

// ring is a first-in first-out queue. It grows by doubling and never
// shrinks, so a queue in steady state allocates nothing per operation. The
// zero value is an empty queue. It is not safe for concurrent use; its
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

func (q *ring[E]) grow() {
	size := 2 * len(q.buf)
	if size == 0 {
		size = 16
	}
	buf := make([]E, size)
	for i := range q.n {
		buf[i] = *q.at(i)
	}
	q.buf, q.head = buf, 0
}

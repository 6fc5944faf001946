package informer

import "github.com/kinformer/kinformer/cache"

// queueWriter is the store an informer's reflector writes to: the
// informer's delta queue, with hooks. Each hook is optional.
type queueWriter[T cache.Object] struct {
	fifo *cache.DeltaFIFO[T]
	// wrote runs after every write.
	wrote func()
	// fill runs before a Replace, with its items.
	fill func(items []T)
	// listed runs once a whole list is queued: after a Replace or a
	// relist's Finish.
	listed func()
}

// writer is the Shared informer's queueWriter: writes sample the cache's
// lag, and a first list sizes an empty cache once. It needs no listed:
// the reflector's Confirmed (confirmedByServer) follows every list.
func (inf *Shared[T]) writer() queueWriter[T] {
	return queueWriter[T]{
		fifo:  inf.fifo,
		wrote: func() { inf.lag.start(inf.fifo, inf.clock) },
		fill:  inf.reserve,
	}
}

// writer is the Controller's queueWriter. A first list with nothing in it
// is followed by no pop that could notice the queue has synced, so listed
// does (TestControllerWithAnEmptyFirstListSyncs).
func (c *Controller[T]) writer() queueWriter[T] {
	return queueWriter[T]{
		fifo: c.fifo,
		listed: func() {
			if c.fifo.HasSynced() {
				c.markSynced()
			}
		},
	}
}

func (w queueWriter[T]) Add(obj T) error    { return w.after(w.fifo.Add(obj)) }
func (w queueWriter[T]) Update(obj T) error { return w.after(w.fifo.Update(obj)) }
func (w queueWriter[T]) Delete(obj T) error { return w.after(w.fifo.Delete(obj)) }

// after runs the wrote hook and passes err on.
func (w queueWriter[T]) after(err error) error {
	if w.wrote != nil {
		w.wrote()
	}
	return err
}

// afterList runs the listed hook.
func (w queueWriter[T]) afterList() {
	if w.listed != nil {
		w.listed()
	}
}

func (w queueWriter[T]) Replace(items []T, rv string) error {
	if w.fill != nil {
		w.fill(items)
	}
	err := w.after(w.fifo.Replace(items, rv))
	w.afterList()
	return err
}

// BeginRelist lets the reflector apply a relist as it arrives (see
// cache.DeltaFIFO.BeginRelist), with the writer's hooks.
func (w queueWriter[T]) BeginRelist() (cache.RelistSession[T], bool) {
	s, ok := w.fifo.BeginRelist()
	if !ok {
		return nil, false
	}
	return queueRelist[T]{RelistSession: s, w: w}, true
}

// queueRelist is a relist through a queueWriter.
type queueRelist[T cache.Object] struct {
	cache.RelistSession[T]
	w queueWriter[T]
}

func (s queueRelist[T]) Apply(items []T) error { return s.w.after(s.RelistSession.Apply(items)) }
func (s queueRelist[T]) Delete(obj T) error    { return s.w.after(s.RelistSession.Delete(obj)) }

func (s queueRelist[T]) Finish(rv string) error {
	err := s.w.after(s.RelistSession.Finish(rv))
	s.w.afterList()
	return err
}

package informer

import "github.com/kinformer/kinformer/cache"

// queueWriter is the cache.Writer an informer's reflector writes to: the
// informer's delta queue, with two hooks. Every write starts a lag sample
// (a bookmark changes nothing, so it starts none), and a first list sizes
// the empty cache once (reserve), so that its maps do not grow object by
// object as the pop loop adds them.
type queueWriter[T cache.Object] struct {
	queue   *cache.DeltaFIFO[T]
	lag     *lagSampler
	indexer *cache.Indexer[T]
}

var _ cache.Writer[cache.Object] = queueWriter[cache.Object]{}

func (w queueWriter[T]) Add(obj T) error    { return w.wrote(w.queue.Add(obj)) }
func (w queueWriter[T]) Update(obj T) error { return w.wrote(w.queue.Update(obj)) }
func (w queueWriter[T]) Delete(obj T) error { return w.wrote(w.queue.Delete(obj)) }

// wrote starts a lag sample and passes err on.
func (w queueWriter[T]) wrote(err error) error {
	w.lag.start()
	return err
}

func (w queueWriter[T]) Replace(items []T, rv string) error {
	w.reserve(items)
	return w.wrote(w.queue.Replace(items, rv))
}

// reserve sizes an empty cache for a list about to fill it. A cache that
// holds objects already is left alone: a relist mostly updates what is
// there.
func (w queueWriter[T]) reserve(items []T) {
	if len(items) < 2 || w.indexer.Len() > 0 {
		return
	}
	w.indexer.Reserve(items)
}

func (w queueWriter[T]) Bookmark(rv string) { w.queue.Bookmark(rv) }

// BeginRelist lets the reflector apply a relist as it arrives (see
// cache.DeltaFIFO.BeginRelist), each piece starting a lag sample.
func (w queueWriter[T]) BeginRelist() (cache.RelistSession[T], bool) {
	s, ok := w.queue.BeginRelist()
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

func (s queueRelist[T]) Apply(items []T) error  { return s.w.wrote(s.RelistSession.Apply(items)) }
func (s queueRelist[T]) Delete(obj T) error     { return s.w.wrote(s.RelistSession.Delete(obj)) }
func (s queueRelist[T]) Finish(rv string) error { return s.w.wrote(s.RelistSession.Finish(rv)) }

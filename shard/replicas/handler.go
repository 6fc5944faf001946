package replicas

import (
	"sync"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/shard"
)

// Handler is told about the objects a replica owns: their changes, and
// the changes of their ownership, each as what it is. An object that moves
// to another replica is released, never deleted; one that moves here is
// acquired, never added.
//
// It is informer.Handler, with the same meaning for each call, and two
// calls more, so that a handler written for an informer serves a replica
// by adding OnAcquire and OnRelease (embed it). Only OnAdd's
// isInInitialList differs: it is always false here, because the objects
// of a range's first list come as OnAcquire.
//
// Calls to one Handler are made one at a time, whatever range the object
// is in. For one object, they come in the order of its changes: OnAcquire
// (or OnAdd), then OnUpdate, then OnDelete or OnRelease. Objects are shared
// with the cache and must not be mutated.
type Handler[T cache.Object] interface {
	// OnAdd, OnUpdate, OnDelete: an object was created in, changed in or
	// deleted from a range this replica owns (see informer.Handler).
	informer.Handler[T]
	// OnAcquire: obj is now owned by this replica, because the range it is
	// in was acquired (at start, every object of the replica's share is).
	// The range has synced: reads (Cache, Owns) see it from its first
	// OnAcquire on. In a Group, the replica claims the range once every
	// handler has returned from every OnAcquire of it, and only then does
	// the previous owner release it.
	OnAcquire(obj T)
	// OnRelease: obj is no longer owned by this replica, because its range
	// went to another replica, which had synced it first (or because the
	// replica is leaving). obj is its last cached state. Notifications of
	// the range still pending when it is released are dropped: OnRelease
	// is the last call for the object.
	OnRelease(obj T)
}

// HandlerFuncs is a Handler built from functions; nil functions are
// skipped. The zero value ignores every notification. Its first three
// fields are informer.HandlerFuncs'.
type HandlerFuncs[T cache.Object] struct {
	AddFunc     func(obj T, isInInitialList bool)
	UpdateFunc  func(oldObj, newObj T)
	DeleteFunc  func(obj T, stateUnknown bool)
	AcquireFunc func(obj T)
	ReleaseFunc func(obj T)
}

// OnAdd calls AddFunc if it is set.
func (h HandlerFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if h.AddFunc != nil {
		h.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc if it is set.
func (h HandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if h.UpdateFunc != nil {
		h.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if it is set.
func (h HandlerFuncs[T]) OnDelete(obj T, stateUnknown bool) {
	if h.DeleteFunc != nil {
		h.DeleteFunc(obj, stateUnknown)
	}
}

// OnAcquire calls AcquireFunc if it is set.
func (h HandlerFuncs[T]) OnAcquire(obj T) {
	if h.AcquireFunc != nil {
		h.AcquireFunc(obj)
	}
}

// OnRelease calls ReleaseFunc if it is set.
func (h HandlerFuncs[T]) OnRelease(obj T) {
	if h.ReleaseFunc != nil {
		h.ReleaseFunc(obj)
	}
}

// Registration is a Handler added to an Informer (AddHandler), given back
// to RemoveHandler.
type Registration struct {
	// synced is closed once the handler has been handed the objects of
	// every range held when it was added (see HasSynced).
	synced chan struct{}
}

// HasSynced reports whether the handler has returned from the OnAcquire
// calls of every range the Informer held (owned or being synced) when the
// handler was added, or the range has been released since. It is true at
// once for a handler added before Run, or when no range was held: ranges
// acquired later count as owned only once every handler has returned from
// their OnAcquire calls, so a caller that waits for them (SetRanges, a
// Group's Synced) waits for this handler too. It never turns back to
// false. A handler removed before it is synced never is.
func (r *Registration) HasSynced() bool {
	select {
	case <-r.synced:
		return true
	default:
		return false
	}
}

// Synced returns a channel closed once HasSynced is true, for waiting in a
// select together with a context.
func (r *Registration) Synced() <-chan struct{} { return r.synced }

// serial is one Handler added to an Informer: its calls, from the
// delivery goroutines of every range and from releases, are made one at
// a time, and none once it is removed.
type serial[T cache.Object] struct {
	h   Handler[T]
	reg *Registration
	// gone is closed when the handler is removed.
	gone chan struct{}
	// mu is held during each call to h and guards removed.
	mu      sync.Mutex
	removed bool
}

func newSerial[T cache.Object](h Handler[T]) *serial[T] {
	return &serial[T]{h: h, reg: &Registration{synced: make(chan struct{})}, gone: make(chan struct{})}
}

func (s *serial[T]) call(fn func(Handler[T])) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.removed {
		fn(s.h)
	}
}

// remove stops the calls to h; it returns once no call is in progress.
func (s *serial[T]) remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.removed {
		s.removed = true
		close(s.gone)
	}
}

// rangeHandler adapts a serial to the handler of one range's shared
// informer: the adds of its initial list are acquisitions, which come
// only once the range's informer has synced, so the first one makes the
// range readable before the handler sees it.
type rangeHandler[T shard.Member] struct {
	s *serial[T]
	p *part[T]
	i *Informer[T]
}

func (r rangeHandler[T]) OnAdd(obj T, initial bool) {
	if initial {
		r.i.markReadable(r.p)
		r.s.call(func(h Handler[T]) { h.OnAcquire(obj) })
		return
	}
	r.s.call(func(h Handler[T]) { h.OnAdd(obj, false) })
}

func (r rangeHandler[T]) OnUpdate(oldObj, newObj T) {
	r.s.call(func(h Handler[T]) { h.OnUpdate(oldObj, newObj) })
}

func (r rangeHandler[T]) OnDelete(obj T, stateUnknown bool) {
	r.s.call(func(h Handler[T]) { h.OnDelete(obj, stateUnknown) })
}

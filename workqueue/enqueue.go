package workqueue

import (
	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
)

// EnqueueOptions configures [NewEnqueue]. Key is required.
type EnqueueOptions[O cache.Object, T comparable] struct {
	// Key maps a changed object to the item to add, for example
	// cache.MetaNamespaceKey[*corev1.Pod] or a function returning the key
	// of the object's owner. An error skips the object.
	Key func(obj O) (T, error)
	// InitialPriority is the priority of the adds that are not changes:
	// an informer's initial list (its first list, the objects of a
	// checkpoint it started from, the replay of its cache to a handler
	// added late) and updates that change nothing (a resync, or a relist
	// that found the object as it was: same resource version). Nil means
	// PriorityLow; new(PriorityNormal) queues them like any change, as a
	// queue without priorities would.
	InitialPriority *int
}

// Enqueue is an informer handler that adds the key of every object that
// changed to a work queue: at PriorityNormal for a change (an add after the
// initial list, an update to a new resource version, a delete), at
// EnqueueOptions.InitialPriority (PriorityLow by default) for the rest. So
// after a restart the objects of the initial list are reconciled while
// nothing else waits, and a real change goes ahead of all of them; an
// object of the initial list that changes before its turn is raised to
// PriorityNormal.
//
// Create one with [NewEnqueue] and register it with the informer's
// AddHandler; it is safe for concurrent use.
type Enqueue[O cache.Object, T comparable] struct {
	q       *Queue[T]
	key     func(O) (T, error)
	initial int
}

var _ informer.Handler[cache.Object] = (*Enqueue[cache.Object, string])(nil)

// NewEnqueue returns a handler feeding q. It panics if opts.Key is nil, a
// programming error found when the controller is built.
func NewEnqueue[O cache.Object, T comparable](q *Queue[T], opts EnqueueOptions[O, T]) *Enqueue[O, T] {
	if opts.Key == nil {
		panic("workqueue: NewEnqueue with a nil Key")
	}
	e := &Enqueue[O, T]{q: q, key: opts.Key, initial: PriorityLow}
	if opts.InitialPriority != nil {
		e.initial = *opts.InitialPriority
	}
	return e
}

// OnAdd implements informer.Handler.
func (e *Enqueue[O, T]) OnAdd(obj O, isInInitialList bool) {
	if isInInitialList {
		e.add(obj, e.initial)
	} else {
		e.add(obj, PriorityNormal)
	}
}

// OnUpdate implements informer.Handler.
func (e *Enqueue[O, T]) OnUpdate(oldObj, newObj O) {
	if oldObj.GetResourceVersion() == newObj.GetResourceVersion() {
		e.add(newObj, e.initial)
	} else {
		e.add(newObj, PriorityNormal)
	}
}

// OnDelete implements informer.Handler.
func (e *Enqueue[O, T]) OnDelete(obj O, _ bool) { e.add(obj, PriorityNormal) }

func (e *Enqueue[O, T]) add(obj O, p int) {
	if item, err := e.key(obj); err == nil {
		e.q.AddWithOptions(item, AddOptions{Priority: p})
	}
}

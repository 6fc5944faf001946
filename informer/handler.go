package informer

import "github.com/kinformer/kinformer/cache"

// Handler is told about every change an informer applies to its cache.
//
// For one object, calls come in the order the changes happened. The
// objects are shared with the cache and every other handler: a handler
// must not mutate them. A handler runs on the informer's processing
// goroutine (or, for a shared informer, on its own delivery goroutine), so
// it should return quickly.
type Handler[T cache.Object] interface {
	// OnAdd: obj appeared in the cache. isInInitialList is true while the
	// informer delivers the objects of its first list, false for objects
	// created later.
	OnAdd(obj T, isInInitialList bool)
	// OnUpdate: the cached object changed from oldObj to newObj. A periodic
	// resync, or a relist that found the object unchanged, calls it with
	// both of the same resource version.
	OnUpdate(oldObj, newObj T)
	// OnDelete: obj left the cache. stateUnknown is true when the deletion
	// itself was missed (a relist no longer found the object); obj is then
	// the last state the cache knew, and may be stale.
	OnDelete(obj T, stateUnknown bool)
}

// HandlerFuncs is a Handler built from functions; nil functions are
// skipped. The zero value ignores every notification.
type HandlerFuncs[T cache.Object] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj T, stateUnknown bool)
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

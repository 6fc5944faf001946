package clientgo

import (
	"fmt"
	"sync"
	"time"

	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
)

// minimumResyncPeriod is client-go's floor for a handler's resync period.
const minimumResyncPeriod = time.Second

// AddEventHandler adds a handler with the informer's default resync period.
func (s *SharedIndexInformer[T]) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(handler, toolscache.HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod adds a handler resynced every resyncPeriod
// (zero: never), within client-go's rules (see the package doc).
func (s *SharedIndexInformer[T]) AddEventHandlerWithResyncPeriod(handler toolscache.ResourceEventHandler, resyncPeriod time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(handler, toolscache.HandlerOptions{ResyncPeriod: &resyncPeriod})
}

// AddEventHandlerWithOptions adds a handler. It is first told of every cached
// object (OnAdd with isInInitialList true), then of every change, on its own
// goroutine. It fails once the informer has stopped. options.Logger is not
// used.
func (s *SharedIndexInformer[T]) AddEventHandlerWithOptions(handler toolscache.ResourceEventHandler, options toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	if handler == nil {
		return nil, fmt.Errorf("informer %s: nil handler", s.inf.Name())
	}
	period := s.resyncPeriod(options.ResyncPeriod)
	r := &registration[T]{handler: handler, keyFunc: s.keyFunc, shutdown: make(chan struct{})}
	reg, err := s.inf.AddHandler(r, informer.HandlerOptions{Name: fmt.Sprintf("%T", handler), ResyncPeriod: period})
	if err != nil {
		return nil, fmt.Errorf("handler %v was not added to shared informer because it has stopped already: %w", handler, err)
	}
	r.reg = reg
	return r, nil
}

// resyncPeriod turns a client-go handler's requested period (nil: the
// informer's default) into kinformer's: zero for the informer's own default
// (a wrapped informer's, which the adapter does not know), negative for never.
func (s *SharedIndexInformer[T]) resyncPeriod(requested *time.Duration) time.Duration {
	if requested == nil && !s.owned {
		return 0
	}
	period := s.defaultResync
	if requested != nil {
		period = *requested
	}
	switch {
	case period <= 0 || s.noResync:
		return -1
	case period < minimumResyncPeriod:
		return minimumResyncPeriod
	}
	return period
}

// RemoveEventHandler stops delivering to the handler of handle: no call starts
// after it returns, and notifications still pending are dropped. Removing a
// handle twice returns nil, as in client-go; a handle of another informer
// is an error.
func (s *SharedIndexInformer[T]) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*registration[T])
	if !ok || r.reg == nil {
		return fmt.Errorf("informer %s: RemoveEventHandler: handle %T was not made by this informer", s.inf.Name(), handle)
	}
	if !r.remove() {
		return nil // already removed
	}
	if err := s.inf.RemoveHandler(r.reg); err != nil {
		return fmt.Errorf("informer %s: RemoveEventHandler: %w", s.inf.Name(), err)
	}
	return nil
}

// registration is both the kinformer handler and the client-go registration
// handle of one client-go handler.
type registration[T cache.Object] struct {
	handler toolscache.ResourceEventHandler
	keyFunc cache.KeyFunc[T]
	// reg is set once AddHandler has returned, before the handle is handed
	// out; it is not read by the handler methods.
	reg *informer.Registration

	// mu guards removed and inCall; shutdown is closed, under mu, once
	// removed is set and no call is in progress.
	mu       sync.Mutex
	removed  bool
	inCall   bool
	shutdown chan struct{}
}

// HasSynced reports whether the handler has returned from every add of the
// initial list (or of the objects cached when it was added).
func (r *registration[T]) HasSynced() bool { return r.reg.HasSynced() }

// HasSyncedChecker returns a DoneChecker for HasSynced.
func (r *registration[T]) HasSyncedChecker() toolscache.DoneChecker {
	return doneChecker{name: "event handler " + r.reg.Name(), done: r.reg.Synced()}
}

// ShutdownChan is closed once the handler has been removed and has returned
// from its last call: what client-go's ShutDownEventHandler waits for.
func (r *registration[T]) ShutdownChan() <-chan struct{} { return r.shutdown }

// remove marks r removed, and reports whether it was not already.
func (r *registration[T]) remove() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.removed {
		return false
	}
	r.removed = true
	if !r.inCall {
		close(r.shutdown)
	}
	return true
}

// begin starts one handler call, unless the handler has been removed; end
// finishes it. Calls come from the registration's one delivery goroutine, so
// never overlap.
func (r *registration[T]) begin() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.removed {
		return false
	}
	r.inCall = true
	return true
}

// end runs deferred, so also when the handler panics (the informer then
// reports the panic).
func (r *registration[T]) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inCall = false
	if r.removed {
		close(r.shutdown)
	}
}

func (r *registration[T]) OnAdd(obj T, isInInitialList bool) {
	if !r.begin() {
		return
	}
	defer r.end()
	r.handler.OnAdd(obj, isInInitialList)
}

func (r *registration[T]) OnUpdate(oldObj, newObj T) {
	if !r.begin() {
		return
	}
	defer r.end()
	r.handler.OnUpdate(oldObj, newObj)
}

// OnDelete hands client-go's handler the object, or, when the deletion itself
// was missed, a DeletedFinalStateUnknown carrying the last known object.
func (r *registration[T]) OnDelete(obj T, stateUnknown bool) {
	if !r.begin() {
		return
	}
	defer r.end()
	if !stateUnknown {
		r.handler.OnDelete(obj)
		return
	}
	key, _ := r.keyFunc(obj) // it was cached under this key
	r.handler.OnDelete(toolscache.DeletedFinalStateUnknown{Key: key, Obj: obj})
}

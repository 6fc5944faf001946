package clientgo

import (
	"context"
	"fmt"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

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
// goroutine. It fails once the informer has stopped. options.Logger is used
// only to log the handler's panics under Options.CrashOnHandlerPanic.
func (s *SharedIndexInformer[T]) AddEventHandlerWithOptions(handler toolscache.ResourceEventHandler, options toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	if handler == nil {
		return nil, fmt.Errorf("informer %s: nil handler", s.inf.Name())
	}
	period := s.resyncPeriod(options.ResyncPeriod)
	r := &registration[T]{owner: s.inf, handler: handler, keyFunc: s.keyFunc, shutdown: make(chan struct{})}
	if s.crash {
		r.crash = &crashing{logger: klog.Background()}
		if options.Logger != nil {
			r.crash.logger = *options.Logger
		}
	}
	reg, err := s.inf.AddHandler(r, informer.HandlerOptions{Name: fmt.Sprintf("%T", handler), ResyncPeriod: period})
	if err != nil {
		return nil, &notAddedError{handler: handler, err: err}
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

// notAddedError is AddEventHandler's error once the informer has stopped. Its
// text is client-go's, word for word, since callers match it (client-go's
// own tests do); errors.Is(err, informer.ErrStopped) holds.
type notAddedError struct {
	handler toolscache.ResourceEventHandler
	err     error
}

func (e *notAddedError) Error() string {
	return fmt.Sprintf("handler %v was not added to shared informer because it has stopped already", e.handler)
}

func (e *notAddedError) Unwrap() error { return e.err }

// RemoveEventHandler stops delivering to the handler of handle: no call starts
// after it returns, and notifications still pending are dropped. As in
// client-go, removing a handle twice returns nil, and so does a handle
// another informer made, which is left untouched (an adapter presenting the
// same kinformer informer, Options.Shared, removes it); a handle of any
// other kind is an error.
func (s *SharedIndexInformer[T]) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*registration[T])
	if !ok || r.reg == nil {
		return fmt.Errorf("informer %s: RemoveEventHandler: handle %T was not made by this informer", s.inf.Name(), handle)
	}
	if r.owner != s.inf {
		return nil // another informer's: not registered here
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
	// owner is the kinformer informer the handler was added to (several
	// adapters may present one informer made elsewhere: Options.Shared).
	owner   *informer.Shared[T]
	handler toolscache.ResourceEventHandler
	keyFunc cache.KeyFunc[T]
	// reg is set once AddHandler has returned, before the handle is handed
	// out; it is not read by the handler methods.
	reg *informer.Registration
	// crash, set under Options.CrashOnHandlerPanic, is used by the
	// delivery goroutine only.
	crash *crashing

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

// call runs one call of the handler, unless it has been removed.
func (r *registration[T]) call(f func()) {
	if r.crash != nil {
		r.crash.pause()
	}
	if !r.begin() {
		return
	}
	defer r.end()
	if r.crash != nil {
		r.crash.call(f)
		return
	}
	f()
}

func (r *registration[T]) OnAdd(obj T, isInInitialList bool) {
	r.call(func() { r.handler.OnAdd(obj, isInInitialList) })
}

func (r *registration[T]) OnUpdate(oldObj, newObj T) {
	r.call(func() { r.handler.OnUpdate(oldObj, newObj) })
}

// OnDelete hands client-go's handler the object, or, when the deletion itself
// was missed, a DeletedFinalStateUnknown carrying the last known object.
func (r *registration[T]) OnDelete(obj T, stateUnknown bool) {
	r.call(func() {
		if !stateUnknown {
			r.handler.OnDelete(obj)
			return
		}
		key, _ := r.keyFunc(obj) // it was cached under this key
		r.handler.OnDelete(toolscache.DeletedFinalStateUnknown{Key: key, Obj: obj})
	})
}

// crashing runs a handler's calls as client-go's informer does
// (Options.CrashOnHandlerPanic). Its fields belong to the registration's
// delivery goroutine.
type crashing struct {
	logger klog.Logger
	// panicked: the last call panicked and the process did not crash.
	panicked bool
}

// pause waits a second after a call that panicked, as client-go's listener
// does before its next notification.
func (c *crashing) pause() {
	if c.panicked {
		c.panicked = false
		time.Sleep(time.Second)
	}
}

// call runs f under utilruntime.HandleCrash. HandleCrash logs a panic and,
// when utilruntime.ReallyCrash is set, panics again; kinformer's informer
// would recover that panic and report it, so it is raised again on a
// goroutine of its own, where nothing recovers it and the process crashes,
// as it would under client-go.
func (c *crashing) call(f func()) {
	defer func() {
		if p := recover(); p != nil {
			go func() { panic(p) }()
			select {} // the process is crashing
		}
	}()
	defer utilruntime.HandleCrashWithLogger(c.logger, func(context.Context, any) { c.panicked = true })
	f()
}

package informer

import (
	"errors"
	"fmt"
	"time"
)

// Errors of the shared informer and the factory, matched with errors.Is.
var (
	// ErrStopped: the informer's Run has returned; no handler can be added.
	ErrStopped = errors.New("informer stopped")
	// ErrAlreadyStarted: Run was called a second time.
	ErrAlreadyStarted = errors.New("informer already started")
	// ErrUnknownRegistration: RemoveHandler was given a registration this
	// informer did not make, or one already removed.
	ErrUnknownRegistration = errors.New("unknown handler registration")
)

// HandlerOptions configures one handler registration. The zero value is a
// handler named after its position, resyncing at the informer's period.
type HandlerOptions struct {
	// Name names the handler in metrics and in reported panics. Default
	// "handler-N", N counting this informer's registrations from 0.
	Name string
	// ResyncPeriod is how often the handler is handed every cached object
	// again, as OnUpdate(obj, obj). Zero means the informer's ResyncPeriod;
	// negative means never.
	//
	// Resyncs ride on one timer per informer, whose period is fixed when
	// Run starts: the shortest handler period then. A handler added later
	// with a shorter period resyncs at the timer's period, and a handler
	// added later to an informer started without any resync never resyncs.
	ResyncPeriod time.Duration
}

// Registration is a handler's membership in one shared informer, returned by
// AddHandler and given back to RemoveHandler.
type Registration struct {
	name string
	// synced is closed by the listener when the handler has processed its
	// initial notifications.
	synced chan struct{}
}

// Name returns the handler's name.
func (r *Registration) Name() string { return r.name }

// HasSynced reports whether the handler has returned from every
// notification of the informer's initial list, or, for a handler added
// after it, of the objects cached when it was added. A handler that panics
// still syncs. It never turns back to false.
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

// AddHandler registers h: from now on it is notified of every change, on its
// own goroutine, after an add for each object already cached. It may be
// called before, during or after Run; it fails with ErrStopped once Run has
// returned. Added before Run, the handler's initial adds are those of the
// initial list; its goroutine starts with Run.
func (inf *Shared[T]) AddHandler(h Handler[T], opts HandlerOptions) (*Registration, error) {
	if h == nil {
		return nil, fmt.Errorf("informer %s: AddHandler: nil handler", inf.name)
	}
	var (
		reg     *Registration
		keyErrs []error
		err     error
	)
	inf.cache.hold(func() { reg, keyErrs, err = inf.handlers.add(h, opts, inf.cache.indexer.List()) })
	for _, err := range keyErrs { // outside the locks, so the handler may call back
		inf.report(err)
	}
	return reg, err
}

// RemoveHandler unregisters reg's handler. No notification starts after it
// returns; one in progress runs to its end, and the handler's goroutine then
// exits. Pending notifications are dropped. It may be called at any time,
// and fails with ErrUnknownRegistration for a registration this informer
// does not hold.
func (inf *Shared[T]) RemoveHandler(reg *Registration) error { return inf.handlers.remove(reg) }

package informer

import (
	"errors"
	"fmt"
	"time"

	"github.com/kinformer/kinformer/metrics"
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
	var keyErrs []error
	defer func() { // outside the lock, so the handler may call back
		for _, err := range keyErrs {
			inf.report(err)
		}
	}()
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.state == stopped {
		return nil, fmt.Errorf("informer %s: AddHandler: %w", inf.name, ErrStopped)
	}
	name := opts.Name
	if name == "" {
		name = fmt.Sprintf("handler-%d", inf.nextHandler)
	}
	inf.nextHandler++
	reg := &Registration{name: name, synced: make(chan struct{})}

	var hm metrics.HandlerMetrics
	if inf.provider != nil {
		hm = inf.provider.NewHandlerMetrics(inf.name, name)
	}
	timed := hm.Latency != nil
	l := newListener(h, reg, inf.clock, hm.WithDefaults(), timed, inf.report, &inf.cached)
	l.minThreshold = inf.minThreshold
	l.resyncPeriod = opts.ResyncPeriod
	if l.resyncPeriod == 0 {
		l.resyncPeriod = inf.resync
	}
	if inf.state == running && l.resyncPeriod > 0 && l.resyncPeriod < inf.resyncCheck {
		l.resyncPeriod = inf.resyncCheck
	}

	inf.flushInitialLocked() // those are in the indexer listed below
	objs := inf.indexer.List()
	batch := make([]keyedNotification[T], 0, len(objs))
	for _, obj := range objs {
		key, err := inf.keyFunc(obj)
		if err != nil {
			keyErrs = append(keyErrs, fmt.Errorf("informer %s: %w", inf.name, err))
			continue
		}
		batch = append(batch, keyedNotification[T]{key, notification[T]{kind: addNotification, obj: obj, initial: true}})
	}
	l.addAll(batch)
	if inf.synced {
		l.markSynced()
	}
	inf.listeners = append(inf.listeners, l)
	if inf.state == running {
		inf.startLocked(l, inf.clock.Now())
	}
	return reg, nil
}

// RemoveHandler unregisters reg's handler. No notification starts after it
// returns; one in progress runs to its end, and the handler's goroutine then
// exits. Pending notifications are dropped. It may be called at any time,
// and fails with ErrUnknownRegistration for a registration this informer
// does not hold.
func (inf *Shared[T]) RemoveHandler(reg *Registration) error {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	for i, l := range inf.listeners {
		if l.reg == reg {
			inf.listeners = append(inf.listeners[:i], inf.listeners[i+1:]...)
			l.stop()
			return nil
		}
	}
	return fmt.Errorf("informer %s: RemoveHandler: %w", inf.name, ErrUnknownRegistration)
}

// startLocked starts l's delivery goroutine.
func (inf *Shared[T]) startLocked(l *listener[T], now time.Time) {
	if l.resyncPeriod > 0 {
		l.nextResync = now.Add(l.resyncPeriod)
	}
	inf.wg.Go(func() {
		defer close(l.exited)
		l.run()
	})
}

// minResyncLocked returns the shortest positive resync period among the
// informer's default and its handlers', or zero.
func (inf *Shared[T]) minResyncLocked() time.Duration {
	m := inf.resync
	if m < 0 {
		m = 0
	}
	for _, l := range inf.listeners {
		if p := l.resyncPeriod; p > 0 && (m == 0 || p < m) {
			m = p
		}
	}
	return m
}

// shouldResync is the resync timer's gate: it marks the handlers whose
// period has come and says whether there is any. The Sync deltas that
// follow go to those handlers only.
func (inf *Shared[T]) shouldResync() bool {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	now := inf.clock.Now()
	due := false
	for _, l := range inf.listeners {
		l.resyncDue = false
		if l.resyncPeriod > 0 && !now.Before(l.nextResync) {
			l.resyncDue = true
			l.nextResync = now.Add(l.resyncPeriod)
			due = true
		}
	}
	return due
}

package informer

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/reflector"
)

// ControllerOptions configures NewController. Source is required.
type ControllerOptions[T cache.Object] struct {
	// Name appears in reported errors. Defaults to "controller".
	Name string
	// Source is listed and watched.
	Source listwatch.ListerWatcher[T]
	// Handler is told about every change applied to the indexer. Nil
	// means no notifications: the controller only maintains the indexer.
	Handler Handler[T]
	// Indexers are the indexer's secondary indexes.
	Indexers cache.Indexers[T]
	// KeyFunc keys the indexer and the queue. Defaults to
	// cache.MetaNamespaceKey. Objects it fails on are reported and skipped.
	KeyFunc cache.KeyFunc[T]
	// ResyncPeriod, when positive, re-delivers every cached object to
	// Handler.OnUpdate that often (old and new the same), without talking
	// to the source.
	ResyncPeriod time.Duration
	// Transform, when set, rewrites each object before it is queued (for
	// example to drop managedFields). It gets objects from the source that
	// no one else holds. An error skips that object alone, listed or
	// watched, and is reported.
	Transform func(T) (T, error)
	// ErrorHandler is told every failure: the reflector's (wrapping a
	// *listwatch.PhaseError), failed indexer writes, and handler panics
	// (*HandlerPanicError). Calls may come from two goroutines at once.
	// When nil, errors are logged with log/slog at level Error.
	ErrorHandler func(error)
	// Clock drives back-off and resync. Defaults to clock.RealClock{}.
	Clock clock.WithTicker
	// Settings tune how the source is listed and watched (page size,
	// streaming lists, watch timeouts, back-off). What is listed — the
	// namespace and selectors — is set on the source itself.
	Settings reflector.Settings
	// Metrics, when set, receives the measurements of the reflector and of
	// the controller's delta queue and cache (NewReflectorMetrics and
	// NewInformerMetrics, with Name). The handler runs on the pop loop, one
	// call at a time, so it has no backlog of its own: the queue depth is
	// its backlog, and no handler metrics are asked for.
	Metrics metrics.Provider
}

// Controller is the plain informer: a reflector fills a DeltaFIFO from the
// source, and a pop loop applies the queued changes to an indexer and
// calls the one Handler. It is built from the same parts as Shared (the
// package doc draws them): its Handler is the cache writer's subscriber,
// called inline instead of through a handler set.
//
// Ordering: the handler is called on the pop loop goroutine, one call at a
// time, after the indexer has been updated; for one object, calls follow
// the order of its changes. A relist that no longer finds an object
// yields OnDelete with stateUnknown set. A handler that panics is
// reported (as a *HandlerPanicError) and the loop goes on.
//
// Its cache is read through Cache, like a shared informer's.
//
// Create it with NewController, run it once with Run.
type Controller[T cache.Object] struct {
	// Set by NewController, then read-only.
	name    string
	handler Handler[T]
	report  func(error)
	// The queue and the reflector's writer to it, the cache writer, the
	// sync point and the reflector.
	pipeline[T]
	// stages holds the resync timer, when ResyncPeriod is set.
	stages []stage

	started atomic.Bool // set by the first Run
}

// NewController builds a controller that has not started.
func NewController[T cache.Object](opts ControllerOptions[T]) (*Controller[T], error) {
	if opts.Source == nil {
		return nil, errors.New("informer: ControllerOptions.Source is nil")
	}
	c := &Controller[T]{name: opts.Name, handler: opts.Handler, report: opts.ErrorHandler}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	if c.name == "" {
		c.name = "controller"
	}
	if c.handler == nil {
		c.handler = HandlerFuncs[T]{}
	}
	if c.report == nil {
		c.report = func(err error) { slog.Error("kinformer controller", "controller", c.name, "err", err) }
	}
	var im metrics.InformerMetrics
	if opts.Metrics != nil {
		im = opts.Metrics.NewInformerMetrics(c.name)
	}
	po := pipelineOptions[T]{
		name: c.name, source: opts.Source, keyFunc: opts.KeyFunc, indexers: opts.Indexers, transform: opts.Transform,
		report: c.report, clock: clk, provider: opts.Metrics, metrics: im.WithDefaults(), settings: opts.Settings,
	}
	p := newPipeline(po)
	c.pipeline = p
	c.cache.subscribe(c.call, nil)
	if opts.ResyncPeriod > 0 {
		c.stages = []stage{resyncer{name: c.name, period: opts.ResyncPeriod, clock: clk, synced: c.synced.ch,
			queue: c.queue, report: c.report}}
	}
	if err := c.newReflector(po, nil, nil); err != nil {
		return nil, err
	}
	return c, nil
}

// Run starts the reflector and the pop loop and blocks until ctx is done
// and both have exited. It returns nil then, or ErrAlreadyStarted if Run
// was called before.
func (c *Controller[T]) Run(ctx context.Context) error {
	if !c.started.CompareAndSwap(false, true) {
		return ErrAlreadyStarted
	}
	c.run(ctx, c.stages, c.name, c.report)
	return nil
}

// Name returns the controller's name.
func (c *Controller[T]) Name() string { return c.name }

// HasSynced reports whether the first list has been applied to the
// indexer and handed to the handler.
func (c *Controller[T]) HasSynced() bool { return c.synced.done() }

// Synced returns a channel closed once HasSynced is true, for waiting in
// a select together with a context.
func (c *Controller[T]) Synced() <-chan struct{} { return c.synced.ch }

// WaitForCacheSync blocks until HasSynced is true, and returns true, or
// until ctx is done, and returns HasSynced then.
func (c *Controller[T]) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-c.synced.ch:
		return true
	case <-ctx.Done():
		return c.HasSynced()
	}
}

// LastSyncResourceVersion returns the resource version of the last list,
// event or bookmark the reflector queued ("" before the first list).
func (c *Controller[T]) LastSyncResourceVersion() string {
	return c.reflector.LastSyncResourceVersion()
}

// Cache returns a read-only view of the controller's cache; the controller
// is its one writer. Returned objects are shared and must not be mutated.
func (c *Controller[T]) Cache() cache.Reader[T] { return c.cache.indexer.Reader() }

// call tells the handler of one change applied to the cache (the cache
// writer's change subscriber, on the pop loop), turning a panic into a
// reported error.
func (c *Controller[T]) call(ch change[T]) {
	defer func() {
		if r := recover(); r != nil {
			c.report(&HandlerPanicError{Handler: c.name, Value: r, Stack: debug.Stack()})
		}
	}()
	switch n := ch.n; n.kind {
	case addNotification:
		c.handler.OnAdd(n.obj, n.initial)
	case updateNotification:
		c.handler.OnUpdate(n.old, n.obj)
	case deleteNotification:
		c.handler.OnDelete(n.obj, n.unknown)
	}
}

package informer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
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
	// ListWatch tunes how the source is listed and watched (page size,
	// streaming lists, watch timeouts, back-off). What is listed — the
	// namespace and selectors — is set on the source itself.
	ListWatch reflector.Settings
	// Metrics, when set, receives the measurements of the reflector and of
	// the controller's delta queue and cache (NewReflectorMetrics and
	// NewInformerMetrics, with Name). The handler runs on the pop loop, one
	// call at a time, so it has no backlog of its own: the queue depth is
	// its backlog, and no handler metrics are asked for.
	Metrics metrics.Provider
}

// Controller is the plain informer: a reflector fills a DeltaFIFO from the
// source, and a pop loop applies the queued changes to an indexer and
// calls the one Handler.
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
	name      string
	indexer   *cache.Indexer[T]
	fifo      *cache.DeltaFIFO[T]
	reflector *reflector.Reflector[T]
	handler   Handler[T]
	report    func(error)
	resync    time.Duration
	clock     clock.WithTicker
	metrics   metrics.InformerMetrics

	started    atomic.Bool   // set by the first Run
	synced     chan struct{} // closed (once, by syncOnce) when HasSynced turns true
	syncedOnce sync.Once
}

// NewController builds a controller that has not started.
func NewController[T cache.Object](opts ControllerOptions[T]) (*Controller[T], error) {
	if opts.Source == nil {
		return nil, errors.New("informer: ControllerOptions.Source is nil")
	}
	c := &Controller[T]{name: opts.Name, handler: opts.Handler, report: opts.ErrorHandler,
		resync: opts.ResyncPeriod, clock: opts.Clock, synced: make(chan struct{})}
	if c.clock == nil {
		c.clock = clock.RealClock{}
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
	if opts.Metrics != nil {
		c.metrics = opts.Metrics.NewInformerMetrics(c.name)
	}
	c.metrics = c.metrics.WithDefaults()
	keyFunc := opts.KeyFunc
	if keyFunc == nil {
		keyFunc = cache.MetaNamespaceKey[T]
	}
	c.indexer = cache.NewIndexer(cache.IndexerOptions[T]{KeyFunc: keyFunc, Indexers: opts.Indexers})
	c.fifo = cache.NewDeltaFIFO(cache.DeltaFIFOOptions[T]{KeyFunc: opts.KeyFunc, KnownObjects: c.indexer, Transform: opts.Transform})
	r, err := reflector.New(reflector.Options[T]{
		Name:         c.name,
		Source:       opts.Source,
		Store:        c.writer(),
		KeyFunc:      opts.KeyFunc,
		Settings:     opts.ListWatch,
		ErrorHandler: c.report,
		Clock:        c.clock,
		Metrics:      opts.Metrics,
	})
	if err != nil {
		return nil, fmt.Errorf("informer %s: %w", c.name, err)
	}
	c.reflector = r
	return c, nil
}

// Run starts the reflector and the pop loop and blocks until ctx is done
// and both have exited. It returns nil then, or ErrAlreadyStarted if Run
// was called before.
func (c *Controller[T]) Run(ctx context.Context) error {
	if !c.started.CompareAndSwap(false, true) {
		return ErrAlreadyStarted
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := c.reflector.Run(ctx); err != nil {
			c.report(fmt.Errorf("informer %s: reflector: %w", c.name, err))
		}
	})
	if c.resync > 0 {
		wg.Go(func() { c.resyncLoop(ctx) })
	}
	for {
		_, err := c.fifo.Pop(ctx, c.process)
		if ctx.Err() != nil || errors.Is(err, cache.ErrClosed) {
			break
		}
		if err != nil {
			c.report(err)
		}
		c.metrics.QueueDepth.Set(float64(c.fifo.Len()))
		c.metrics.Objects.Set(float64(c.indexer.Len()))
		if c.fifo.HasSynced() {
			c.markSynced()
		}
	}
	wg.Wait()
	c.fifo.Close() // no writer is left
	return nil
}

// markSynced closes synced, once.
func (c *Controller[T]) markSynced() {
	c.syncedOnce.Do(func() { close(c.synced) })
}

// resyncLoop asks the queue for Sync deltas every resync period, once the
// cache has synced. It never talks to the source.
func (c *Controller[T]) resyncLoop(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-c.synced:
	}
	t := c.clock.NewTimer(c.resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if err := c.fifo.Resync(); err != nil {
			c.report(fmt.Errorf("informer %s: resync: %w", c.name, err))
		}
		t.Reset(c.resync)
	}
}

// Name returns the controller's name.
func (c *Controller[T]) Name() string { return c.name }

// HasSynced reports whether the first list has been applied to the
// indexer and handed to the handler.
func (c *Controller[T]) HasSynced() bool { return c.fifo.HasSynced() }

// WaitForCacheSync blocks until HasSynced is true, and returns true, or
// until ctx is done, and returns HasSynced then.
func (c *Controller[T]) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-c.synced:
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
func (c *Controller[T]) Cache() cache.Reader[T] { return c.indexer.Reader() }

// process applies one key's deltas to the indexer and tells the handler.
// A failed indexer write is reported and the object skipped: retrying
// cannot make a key or index function succeed.
func (c *Controller[T]) process(_ string, deltas cache.Deltas[T], isInInitialList bool) error {
	for _, d := range deltas {
		obj := d.Object
		switch d.Type {
		case cache.Deleted:
			if err := c.indexer.Delete(obj); err != nil {
				c.report(fmt.Errorf("informer %s: delete from cache: %w", c.name, err))
				continue
			}
			c.call(func() { c.handler.OnDelete(obj, d.StateUnknown) })
		default: // Added, Updated, Replaced, Sync
			old, exists, err := c.indexer.Get(obj)
			if err == nil {
				if exists {
					err = c.indexer.Update(obj)
				} else {
					err = c.indexer.Add(obj)
				}
			}
			if err != nil {
				c.report(fmt.Errorf("informer %s: %s to cache: %w", c.name, d.Type, err))
				continue
			}
			if exists {
				c.call(func() { c.handler.OnUpdate(old, obj) })
			} else {
				c.call(func() { c.handler.OnAdd(obj, isInInitialList) })
			}
		}
	}
	return nil
}

// call runs one handler call, turning a panic into a reported error.
func (c *Controller[T]) call(f func()) {
	defer func() {
		if r := recover(); r != nil {
			c.report(&HandlerPanicError{Handler: c.name, Value: r, Stack: debug.Stack()})
		}
	}()
	f()
}

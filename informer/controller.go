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
	// no one else holds. An error on a watched object drops that object and
	// is reported; an error on a listed object fails the whole list, which
	// is reported and retried after a back-off, so return errors only for
	// objects that can never be cached.
	Transform func(T) (T, error)
	// ErrorHandler is told every failure: the reflector's (wrapping a
	// *listwatch.PhaseError), failed indexer writes, and handler panics
	// (*HandlerPanicError). Calls may come from two goroutines at once.
	// When nil, errors are logged with log/slog.
	ErrorHandler func(error)
	// Clock drives back-off and resync. Defaults to clock.RealClock{}.
	Clock clock.WithTicker
	// PageSize, Streaming, LabelSelector and FieldSelector are passed to
	// the reflector; see reflector.Options.
	PageSize                     int64
	Streaming                    reflector.StreamingMode
	LabelSelector, FieldSelector string
	// Metrics, when set, instruments the reflector.
	Metrics metrics.ReflectorProvider
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
// Create it with NewController, run it once with Run.
type Controller[T cache.Object] struct {
	name      string
	indexer   cache.Indexer[T]
	fifo      *cache.DeltaFIFO[T]
	reflector *reflector.Reflector[T]
	handler   Handler[T]
	report    func(error)
	started   atomic.Bool // set by the first Run
}

// NewController builds a controller that has not started.
func NewController[T cache.Object](opts ControllerOptions[T]) (*Controller[T], error) {
	if opts.Source == nil {
		return nil, errors.New("informer: ControllerOptions.Source is nil")
	}
	c := &Controller[T]{name: opts.Name, handler: opts.Handler, report: opts.ErrorHandler}
	if c.name == "" {
		c.name = "controller"
	}
	if c.handler == nil {
		c.handler = HandlerFuncs[T]{}
	}
	if c.report == nil {
		c.report = func(err error) { slog.Warn("kinformer controller", "err", err) }
	}
	keyFunc := opts.KeyFunc
	if keyFunc == nil {
		keyFunc = cache.MetaNamespaceKey[T]
	}
	c.indexer = cache.NewIndexer(cache.IndexerOptions[T]{KeyFunc: keyFunc, Indexers: opts.Indexers})
	c.fifo = cache.NewDeltaFIFO(cache.DeltaFIFOOptions[T]{KeyFunc: opts.KeyFunc, KnownObjects: c.indexer, Transform: opts.Transform})
	r, err := reflector.New(reflector.Options[T]{
		Name:          c.name,
		Source:        opts.Source,
		Store:         c.fifo,
		KeyFunc:       opts.KeyFunc, // nil: the same default, checked without building keys
		LabelSelector: opts.LabelSelector,
		FieldSelector: opts.FieldSelector,
		PageSize:      opts.PageSize,
		Streaming:     opts.Streaming,
		ResyncPeriod:  opts.ResyncPeriod,
		ErrorHandler:  c.report,
		Clock:         opts.Clock,
		Metrics:       opts.Metrics,
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
	for {
		_, err := c.fifo.Pop(ctx, c.process)
		if ctx.Err() != nil || errors.Is(err, cache.ErrClosed) {
			break
		}
		if err != nil {
			c.report(err)
		}
	}
	wg.Wait()
	c.fifo.Close() // no writer is left
	return nil
}

// HasSynced reports whether the first list has been applied to the
// indexer and handed to the handler.
func (c *Controller[T]) HasSynced() bool { return c.fifo.HasSynced() }

// LastSyncResourceVersion returns the resource version of the last list,
// event or bookmark the reflector queued ("" before the first list).
func (c *Controller[T]) LastSyncResourceVersion() string {
	return c.reflector.LastSyncResourceVersion()
}

// Indexer returns the controller's cache. It is for reading only: the
// controller is its one writer, and the objects it returns are shared and
// must not be mutated.
func (c *Controller[T]) Indexer() cache.Indexer[T] { return c.indexer }

// process applies one key's deltas to the indexer and tells the handler.
// A failed indexer write is reported and the object skipped: retrying
// cannot make a key or index function succeed.
func (c *Controller[T]) process(deltas cache.Deltas[T], isInInitialList bool) error {
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

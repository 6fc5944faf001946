package clientgo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
)

// Options configures New. Exactly one of Shared and Informer.Source must be
// set.
type Options[T cache.Object] struct {
	// Shared is an existing informer to present, for example one from a
	// kube.Factory. Its transform, error handler and resync default were
	// fixed when it was made, so SetTransform and SetWatchErrorHandler
	// return an error. Its cache must be keyed by cache.MetaNamespaceKey
	// (the default), which is how client-go keys its own.
	Shared *informer.Shared[T]
	// Informer configures the informer New builds when Shared is nil.
	// Its Transform, if set, runs before the one given to SetTransform;
	// its ErrorHandler, if set, receives the errors client-go would send
	// to utilruntime.HandleError (see the package doc); list and watch
	// failures go to the watch error handler.
	Informer informer.Options[T]
	// CrashOnHandlerPanic gives the handlers added through the adapter
	// client-go's treatment of a panic instead of kinformer's: the panic
	// goes to utilruntime.HandleCrash, which logs "Observed a panic" (with
	// HandlerOptions.Logger when the handler was added with one) and,
	// unless utilruntime.ReallyCrash is false, crashes the process. With
	// ReallyCrash false, the handler's next notification waits a second,
	// as with client-go. See the package doc.
	CrashOnHandlerPanic bool
}

// ErrConfigured is returned by SetTransform and SetWatchErrorHandler on an
// informer that New did not build (Options.Shared), or that has started,
// as client-go refuses them after Run.
var ErrConfigured = errors.New("informer already configured")

// SharedIndexInformer is a kinformer shared informer presented as client-go's
// cache.SharedIndexInformer. Create it with New. It is safe for concurrent
// use.
type SharedIndexInformer[T cache.Object] struct {
	inf     *informer.Shared[T]
	keyFunc cache.KeyFunc[T]
	// crash is Options.CrashOnHandlerPanic.
	crash bool
	// owned: New built inf, so the transform and watch error handler can
	// be set until Run.
	owned bool
	// defaultResync is the period AddEventHandler gives a handler, and
	// noResync says the informer resyncs nobody (client-go's rule for an
	// informer built with a zero period).
	defaultResync time.Duration
	noResync      bool

	// mu guards started, watchErrors and transform (set before Run, read
	// by the informer's goroutines through the atomics below) and syncedReg.
	mu      sync.Mutex
	started bool
	// syncedReg is a handler registration made on the first call to
	// HasSyncedChecker, whose Synced channel closes once the informer has
	// synced (see HasSyncedChecker).
	syncedReg *informer.Registration

	watchErrors atomic.Pointer[toolscache.WatchErrorHandlerWithContext]
	transform   atomic.Pointer[toolscache.TransformFunc]

	errors *errorRouter
}

var _ toolscache.SharedIndexInformer = (*SharedIndexInformer[cache.Object])(nil)

// New presents a kinformer informer as a client-go SharedIndexInformer,
// building it from opts.Informer unless opts.Shared is given.
func New[T cache.Object](opts Options[T]) (*SharedIndexInformer[T], error) {
	s := &SharedIndexInformer[T]{keyFunc: cache.MetaNamespaceKey[T], crash: opts.CrashOnHandlerPanic}
	if opts.Shared != nil {
		if opts.Informer.Source != nil {
			return nil, errors.New("clientgo.New: set Shared or Informer.Source, not both")
		}
		s.inf = opts.Shared
		s.errors = newErrorRouter(opts.Shared.Name(), nil)
		return s, nil
	}
	io := opts.Informer
	if io.Source == nil {
		return nil, errors.New("clientgo.New: Options.Shared or Options.Informer.Source is required")
	}
	s.owned = true
	if io.KeyFunc != nil {
		s.keyFunc = io.KeyFunc
	}
	s.defaultResync = io.ResyncPeriod
	s.noResync = io.ResyncPeriod <= 0
	name := io.Name
	if name == "" {
		name = fmt.Sprintf("%T", *new(T))
	}
	s.errors = newErrorRouter(name, io.ErrorHandler)
	s.errors.watch = &s.watchErrors
	io.ErrorHandler = s.errors.report
	io.Transform = s.transformer(io.Transform)
	inf, err := informer.NewShared(io)
	if err != nil {
		return nil, fmt.Errorf("clientgo.New: %w", err)
	}
	s.inf = inf
	return s, nil
}

// Shared returns the kinformer informer behind s.
func (s *SharedIndexInformer[T]) Shared() *informer.Shared[T] { return s.inf }

// transformer chains the informer's own transform (first) with the one
// SetTransform sets, read when each object arrives.
func (s *SharedIndexInformer[T]) transformer(first func(T) (T, error)) func(T) (T, error) {
	return func(obj T) (T, error) {
		if first != nil {
			var err error
			if obj, err = first(obj); err != nil {
				return obj, err
			}
		}
		tf := s.transform.Load()
		if tf == nil {
			return obj, nil
		}
		out, err := (*tf)(obj)
		if err != nil {
			return obj, err
		}
		t, ok := out.(T)
		if !ok {
			var zero T
			return zero, fmt.Errorf("transform returned %T, want %T", out, zero)
		}
		return t, nil
	}
}

// Run runs the informer until stopCh is closed; see RunWithContext.
func (s *SharedIndexInformer[T]) Run(stopCh <-chan struct{}) {
	s.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext lists and watches, keeps the cache and delivers
// notifications until ctx is done, and returns once every goroutine it
// started has exited. As in client-go, a second call logs a warning and
// returns at once; so does a call on a wrapped informer someone else
// (its factory) already runs.
func (s *SharedIndexInformer[T]) RunWithContext(ctx context.Context) {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	if err := s.inf.Run(ctx); err != nil {
		klog.FromContext(ctx).Info("Warning: the kinformer shared informer has started, run more than once is not allowed", "informer", s.inf.Name(), "err", err)
	}
}

// SetTransform sets a transform applied to each object before it is cached,
// after the informer's own. It must return an object of the same type T;
// any other result, or an error, skips that object and is reported. It
// fails with ErrConfigured after Run or on a wrapped informer.
func (s *SharedIndexInformer[T]) SetTransform(handler toolscache.TransformFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.configurableLocked(); err != nil {
		return err
	}
	s.transform.Store(&handler)
	return nil
}

// SetWatchErrorHandler sets the function told of list and watch failures;
// see SetWatchErrorHandlerWithContext.
func (s *SharedIndexInformer[T]) SetWatchErrorHandler(handler toolscache.WatchErrorHandler) error {
	return s.SetWatchErrorHandlerWithContext(func(_ context.Context, r *toolscache.Reflector, err error) {
		handler(r, err)
	})
}

// SetWatchErrorHandlerWithContext sets the function told of the failures
// client-go tells it of: a list that failed, and a watch that could not start
// for a reason other than a refused connection (the informer backs off and
// retries after it). A watch that ends, expired or broken, is only logged,
// as client-go does. The *Reflector it is given only names the informer:
// kinformer's reflector does the listing. The error keeps the server's
// status (apierrors.IsForbidden, apierrors.IsResourceExpired work). It fails
// with ErrConfigured after Run or on a wrapped informer. Without one,
// client-go's DefaultWatchErrorHandler logs.
func (s *SharedIndexInformer[T]) SetWatchErrorHandlerWithContext(handler toolscache.WatchErrorHandlerWithContext) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.configurableLocked(); err != nil {
		return err
	}
	s.watchErrors.Store(&handler)
	return nil
}

func (s *SharedIndexInformer[T]) configurableLocked() error {
	switch {
	case !s.owned:
		return fmt.Errorf("informer %s is wrapped, set it on its factory: %w", s.inf.Name(), ErrConfigured)
	case s.started || s.inf.IsStopped():
		return fmt.Errorf("informer %s has already started: %w", s.inf.Name(), ErrConfigured)
	}
	return nil
}

// HasSynced reports whether the initial list has been cached and handed to
// every handler (not necessarily processed by them: see the registration's
// HasSynced).
func (s *SharedIndexInformer[T]) HasSynced() bool { return s.inf.HasSynced() }

// HasSyncedChecker returns a DoneChecker for HasSynced. Once the informer has
// synced its channel is closed; before, it is that of a registration without
// a handler, made by the first such call, which syncs with the informer's
// initial list (and is removed by a call after that). kinformer's informer
// offers no channel of its own for HasSynced.
func (s *SharedIndexInformer[T]) HasSyncedChecker() toolscache.DoneChecker {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.syncedReg != nil && s.syncedReg.HasSynced() {
		// Its job is done: stop queueing notifications for it.
		_ = s.inf.RemoveHandler(s.syncedReg)
		s.syncedReg = nil
	}
	if s.inf.HasSynced() {
		return doneChecker{name: s.checkerName(), done: closedIf(true)}
	}
	if s.syncedReg == nil {
		reg, err := s.inf.AddHandler(informer.HandlerFuncs[T]{}, informer.HandlerOptions{
			Name: "clientgo-synced", ResyncPeriod: -1,
		})
		if err != nil { // stopped before syncing: never done
			return doneChecker{name: s.checkerName(), done: closedIf(false)}
		}
		s.syncedReg = reg
	}
	return doneChecker{name: s.checkerName(), done: s.syncedReg.Synced()}
}

func (s *SharedIndexInformer[T]) checkerName() string {
	return "SharedIndexInformer " + s.inf.Name()
}

// LastSyncResourceVersion returns the resource version the cache is at.
func (s *SharedIndexInformer[T]) LastSyncResourceVersion() string {
	return s.inf.LastSyncResourceVersion()
}

// IsStopped reports whether the informer has stopped running.
func (s *SharedIndexInformer[T]) IsStopped() bool { return s.inf.IsStopped() }

// GetStore returns the read-only cache; see GetIndexer.
func (s *SharedIndexInformer[T]) GetStore() toolscache.Store { return s.GetIndexer() }

// GetIndexer returns a read-only client-go Indexer over the informer's
// cache, with its indexes. Its writes fail with ErrReadOnly (see the package
// doc).
func (s *SharedIndexInformer[T]) GetIndexer() toolscache.Indexer {
	return &Indexer[T]{inf: s.inf, keyFunc: s.keyFunc}
}

// AddIndexers adds indexes to the cache, before or after Run.
func (s *SharedIndexInformer[T]) AddIndexers(indexers toolscache.Indexers) error {
	return s.inf.AddIndexers(fromClientGoIndexers[T](indexers))
}

// GetController returns a Controller whose Run does nothing (the informer
// runs through Run), as client-go's shared informer does.
func (s *SharedIndexInformer[T]) GetController() toolscache.Controller {
	return controller[T]{s: s}
}

// controller is what GetController returns.
type controller[T cache.Object] struct{ s *SharedIndexInformer[T] }

func (controller[T]) Run(<-chan struct{})               {}
func (controller[T]) RunWithContext(context.Context)    {}
func (c controller[T]) HasSynced() bool                 { return c.s.HasSynced() }
func (c controller[T]) LastSyncResourceVersion() string { return c.s.LastSyncResourceVersion() }
func (c controller[T]) HasSyncedChecker() toolscache.DoneChecker {
	return c.s.HasSyncedChecker()
}

// doneChecker is a client-go DoneChecker over a channel.
type doneChecker struct {
	name string
	done <-chan struct{}
}

func (d doneChecker) Name() string          { return d.name }
func (d doneChecker) Done() <-chan struct{} { return d.done }

// closedIf returns a closed channel when done, a never-closed one otherwise.
func closedIf(done bool) <-chan struct{} {
	ch := make(chan struct{})
	if done {
		close(ch)
	}
	return ch
}

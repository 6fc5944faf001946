package informer

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
)

// FactoryOptions configures NewFactory. The zero value is a factory for
// every namespace, without resync, tweaks or transforms.
type FactoryOptions struct {
	// Namespace is the namespace informers watch unless their
	// InformerOptions say otherwise; "" means every namespace.
	Namespace string
	// DefaultResync is the resync period of informers whose
	// InformerOptions do not set one.
	DefaultResync time.Duration
	// Tweak, when set, edits the options of every list and watch call of
	// every informer (after the selectors are set, before the informer's
	// own Tweak).
	Tweak func(*listwatch.Options)
	// Transform, when set, is the transform of informers that do not set
	// their own (see SharedOptions.Transform). It must return an object of
	// the type it was given; DropManagedFields[cache.Object] is a ready one.
	Transform func(cache.Object) (cache.Object, error)
	// ErrorHandler receives the errors of every informer (see
	// SharedOptions.ErrorHandler). Default: log with log/slog.
	ErrorHandler func(error)
	// Clock is every informer's clock. Default: the real clock.
	Clock clock.WithTicker
	// Metrics, when set, receives every informer's measurements.
	Metrics metrics.InformerProvider
	// MutationDetector turns the cache mutation detector on for every
	// informer (see SharedOptions.MutationDetector).
	MutationDetector bool
}

// InformerOptions selects and configures one informer of a factory.
type InformerOptions[T cache.Object] struct {
	// Namespace, when not empty, replaces the factory's namespace.
	Namespace string
	// LabelSelector and FieldSelector filter the objects, in the server's
	// string syntax.
	LabelSelector string
	FieldSelector string
	// ResyncPeriod, when not zero, replaces the factory's DefaultResync.
	ResyncPeriod time.Duration
	// Transform, when set, replaces the factory's Transform.
	Transform func(T) (T, error)
	// Indexers are added to the informer's cache.
	Indexers cache.Indexers[T]
	// Tweak, when set, edits the options of every list and watch call,
	// after the factory's Tweak.
	Tweak func(*listwatch.Options)
}

// InformerKey identifies one of a factory's informers.
type InformerKey struct {
	// Type is the object type, such as *v1.Pod.
	Type reflect.Type
	// Namespace is "" for every namespace.
	Namespace     string
	LabelSelector string
	FieldSelector string
}

func (k InformerKey) String() string {
	s := k.Type.String()
	if k.Namespace != "" {
		s += " namespace=" + k.Namespace
	}
	if k.LabelSelector != "" {
		s += " labels=" + k.LabelSelector
	}
	if k.FieldSelector != "" {
		s += " fields=" + k.FieldSelector
	}
	return s
}

// factoryInformer is what the factory needs of a SharedIndexInformer[T],
// whatever T.
type factoryInformer interface {
	Run(ctx context.Context) error
	WaitForCacheSync(ctx context.Context) bool
}

type factoryEntry struct {
	informer factoryInformer
	started  bool
}

// Factory hands out shared informers: one per (object type, namespace,
// selectors), whoever asks, so that every controller in a process shares
// one cache and one connection per resource. Get informers with
// InformerFor, then Start them.
//
// The factory owns the goroutines of the informers it started: Shutdown
// stops them and waits for every one. A Factory is safe for concurrent use.
// Create it with NewFactory.
type Factory struct {
	opts FactoryOptions

	// wg counts running informers' Run calls.
	wg sync.WaitGroup

	// mu guards the fields below.
	mu        sync.Mutex
	informers map[InformerKey]*factoryEntry
	// cancels stop the informers started by each Start call.
	cancels      []context.CancelFunc
	shuttingDown bool
}

// NewFactory returns a factory with no informers.
func NewFactory(opts FactoryOptions) *Factory {
	if opts.ErrorHandler == nil {
		opts.ErrorHandler = func(err error) { slog.Error("informer factory error", "error", err) }
	}
	return &Factory{opts: opts, informers: make(map[InformerKey]*factoryEntry)}
}

// InformerFor returns the factory's informer for objects of type T in the
// namespace and with the selectors opts gives, creating it on first use
// with a source made by newSource(namespace). The factory sets the
// selectors, and applies the tweaks, on every list and watch call of that
// source.
//
// Only the call that creates the informer configures it (resync,
// transform); later calls for the same key get the same informer, with
// opts.Indexers added (indexes it already has are kept as they are). An
// informer created after Start runs from the next Start. newSource is called
// with the factory's lock held, so it must not call the factory.
func InformerFor[T cache.Object](f *Factory, opts InformerOptions[T], newSource func(namespace string) (listwatch.ListerWatcher[T], error)) (*SharedIndexInformer[T], error) {
	ns := opts.Namespace
	if ns == "" {
		ns = f.opts.Namespace
	}
	key := InformerKey{
		Type:          reflect.TypeFor[T](),
		Namespace:     ns,
		LabelSelector: opts.LabelSelector,
		FieldSelector: opts.FieldSelector,
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.informers[key]; ok {
		inf := e.informer.(*SharedIndexInformer[T]) // the key holds T's type
		if err := addMissingIndexers(inf, opts.Indexers); err != nil {
			return nil, fmt.Errorf("informer factory: %s: %w", key, err)
		}
		return inf, nil
	}

	src, err := newSource(ns)
	if err != nil {
		return nil, fmt.Errorf("informer factory: %s: new source: %w", key, err)
	}
	resync := opts.ResyncPeriod
	if resync == 0 {
		resync = f.opts.DefaultResync
	}
	transform := opts.Transform
	if transform == nil && f.opts.Transform != nil {
		transform = adaptTransform[T](f.opts.Transform)
	}
	inf, err := NewShared(SharedOptions[T]{
		Name:             key.String(),
		Source:           &tweakedSource[T]{inner: src, tweaks: tweaksFor(key, f.opts.Tweak, opts.Tweak)},
		Indexers:         opts.Indexers,
		ResyncPeriod:     resync,
		Transform:        transform,
		ErrorHandler:     f.opts.ErrorHandler,
		Clock:            f.opts.Clock,
		Metrics:          f.opts.Metrics,
		MutationDetector: f.opts.MutationDetector,
	})
	if err != nil {
		return nil, fmt.Errorf("informer factory: %s: %w", key, err)
	}
	f.informers[key] = &factoryEntry{informer: inf}
	return inf, nil
}

func addMissingIndexers[T cache.Object](inf *SharedIndexInformer[T], indexers cache.Indexers[T]) error {
	if len(indexers) == 0 {
		return nil
	}
	have := inf.indexer.GetIndexers()
	missing := cache.Indexers[T]{}
	for name, fn := range indexers {
		if _, ok := have[name]; !ok {
			missing[name] = fn
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return inf.AddIndexers(missing)
}

// adaptTransform turns the factory's untyped transform into one for T,
// rejecting a result of another type.
func adaptTransform[T cache.Object](fn func(cache.Object) (cache.Object, error)) func(T) (T, error) {
	return func(obj T) (T, error) {
		out, err := fn(obj)
		if err != nil {
			return obj, err
		}
		t, ok := out.(T)
		if !ok {
			return obj, fmt.Errorf("transform returned %T for %T", out, obj)
		}
		return t, nil
	}
}

// Start starts every informer not started yet, each on a goroutine the
// factory owns, running until ctx is done or Shutdown. It does not block,
// and does nothing once Shutdown was called.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shuttingDown {
		return
	}
	var runCtx context.Context
	for key, e := range f.informers {
		if e.started {
			continue
		}
		if runCtx == nil {
			var cancel context.CancelFunc
			runCtx, cancel = context.WithCancel(ctx)
			f.cancels = append(f.cancels, cancel)
		}
		e.started = true
		inf := e.informer
		f.wg.Go(func() {
			if err := inf.Run(runCtx); err != nil {
				f.opts.ErrorHandler(fmt.Errorf("informer factory: %s: %w", key, err))
			}
		})
	}
}

// WaitForCacheSync waits until every started informer has synced, or ctx is
// done, and reports for each whether it synced.
func (f *Factory) WaitForCacheSync(ctx context.Context) map[InformerKey]bool {
	f.mu.Lock()
	started := make(map[InformerKey]factoryInformer)
	for key, e := range f.informers {
		if e.started {
			started[key] = e.informer
		}
	}
	f.mu.Unlock()
	res := make(map[InformerKey]bool, len(started))
	for key, inf := range started {
		res[key] = inf.WaitForCacheSync(ctx)
	}
	return res
}

// Shutdown stops every informer the factory started and waits until all
// their goroutines have exited (including handlers finishing their current
// call). Later Starts do nothing. It may be called more than once.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shuttingDown = true
	for _, cancel := range f.cancels {
		cancel()
	}
	f.cancels = nil
	f.mu.Unlock()
	f.wg.Wait()
}

// tweakedSource applies selectors and tweaks to every call of a source.
type tweakedSource[T cache.Object] struct {
	inner  listwatch.ListerWatcher[T]
	tweaks func(*listwatch.Options)
}

func tweaksFor(key InformerKey, factoryTweak, tweak func(*listwatch.Options)) func(*listwatch.Options) {
	return func(o *listwatch.Options) {
		if key.LabelSelector != "" {
			o.LabelSelector = key.LabelSelector
		}
		if key.FieldSelector != "" {
			o.FieldSelector = key.FieldSelector
		}
		if factoryTweak != nil {
			factoryTweak(o)
		}
		if tweak != nil {
			tweak(o)
		}
	}
}

func (s *tweakedSource[T]) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[T], error) {
	s.tweaks(&opts)
	return s.inner.List(ctx, opts)
}

func (s *tweakedSource[T]) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[T], error) {
	s.tweaks(&opts)
	return s.inner.Watch(ctx, opts)
}

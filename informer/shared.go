package informer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/reflector"
)

// MutationDetectorEnv is the environment variable that, set to "true",
// turns the cache mutation detector on for every shared informer.
const MutationDetectorEnv = "KINFORMER_CACHE_MUTATION_DETECTOR"

// Options configures one shared informer (NewShared). Source is required;
// every other field has a usable zero value. A kube.Factory fills one in
// for each informer it makes.
type Options[T cache.Object] struct {
	// Name names the informer in metrics and errors. Default: T's type,
	// such as "*v1.Pod".
	Name string
	// Source is where objects come from.
	Source listwatch.ListerWatcher[T]
	// KeyFunc keys the cache. Default cache.MetaNamespaceKey, which Lister
	// relies on.
	KeyFunc cache.KeyFunc[T]
	// Indexers are the cache's initial indexes. More can be added at any
	// time with AddIndexers.
	Indexers cache.Indexers[T]
	// ResyncPeriod is the resync period of handlers that do not set their
	// own; zero means they never resync.
	ResyncPeriod time.Duration
	// Transform, when set, is applied to every object the source delivers,
	// before it is cached or handed to a handler. It may modify its argument
	// in place (the object is not shared yet) and return it. An error skips
	// that object alone, listed or watched, and is reported: the rest of a
	// list is still cached and the informer still syncs.
	// DropManagedFields is a ready one.
	Transform func(T) (T, error)
	// ErrorHandler receives every error: from the source (with the phase
	// that failed), handler panics (*HandlerPanicError), cache mutations
	// (*MutationError) and objects skipped because they could not be keyed
	// or transformed. It is called from the informer's goroutines and must
	// not block for long. Default: log with log/slog at level Error.
	ErrorHandler func(error)
	// Clock drives resync, back-off and the mutation detector. Default: the
	// real clock.
	Clock clock.WithTicker
	// Metrics, when set, receives the measurements of the informer (its
	// delta queue and cache), of its reflector (lists, watches, events,
	// back-off), under the informer's Name, and of each handler
	// registration (backlog, merges, latency, panics). Each is reported
	// once; the metrics package lists them.
	Metrics metrics.Provider
	// MutationDetector keeps a deep copy of every cached object and reports
	// a *MutationError when a cached object changes. It needs T to implement
	// runtime.Object (for DeepCopyObject). It is also turned on by
	// KINFORMER_CACHE_MUTATION_DETECTOR=true (silently skipped then for a T
	// that cannot be copied). It doubles the cache's memory: for tests.
	MutationDetector bool
	// MutationCheckPeriod is how often the detector compares. Default 1s.
	MutationCheckPeriod time.Duration
	// Settings tune how the informer lists and watches the source: page
	// size, streaming lists, watch timeouts, back-off.
	Settings reflector.Settings
	// Checkpoint, when its Path is set, saves the cache to a file and
	// starts the next Run from it (see CheckpointOptions).
	Checkpoint CheckpointOptions[T]
}

// Shared keeps an indexed cache of the objects of one source
// and delivers their changes to any number of handlers.
//
// The cache. One goroutine, the informer's, applies the source's changes to
// the cache in the order the source reported them. Everyone else reads it
// through Cache, a cache.Reader, which has no write methods; readers see
// each change before any handler is told about it. Objects in the cache and
// in notifications are shared by every reader and handler: they must not be
// mutated (the mutation detector, MutationDetector, proves it in tests).
//
// Handlers. AddHandler and RemoveHandler may be called at any time, before,
// during or after Run (adding fails once Run has returned). Each handler
// gets:
//
//   - its own goroutine, so handlers run concurrently with each other and
//     with the informer, and a slow or stuck handler delays nobody else;
//   - for a handler added when objects are already cached, one OnAdd per
//     cached object (isInInitialList true) before any other notification;
//   - per object, notifications in the order the cache changed: OnAdd, then
//     OnUpdate(old, new) with old the state the handler last saw, then
//     OnDelete. A delete whose final state was missed (the object vanished
//     during a disconnection) is OnDelete with stateUnknown set and the
//     last known object. There is no order between different objects;
//   - resyncs, if its period is set: OnUpdate(obj, obj) for every cached
//     object, each period;
//   - a Registration whose HasSynced turns true once the handler has
//     returned from every notification of the initial list (or, for a
//     handler added later, of the cached objects it was given).
//
// Back-pressure. A handler's pending notifications live in its own queue,
// and adding to it never blocks. While the handler keeps up, it sees every
// change. When it falls behind by more than the number of cached objects
// (and at least 1024), its pending notifications for the same object are
// merged: it then sees, per object, the latest state rather than every
// intermediate one (an add then updates arrive as one add of the newest
// state, updates as one update from the oldest to the newest state, an add
// then a delete as nothing, a delete then a re-create as that delete then
// that add). Its backlog is thereby bounded by the number of objects cached
// or deleted since it last caught up, whatever the rate of changes. Merges
// are counted in HandlerMetrics.Merged, and HandlerMetrics.Backlog follows
// the pending count as notifications are queued, merged and taken, so it
// grows while a handler is stuck. Level-driven handlers, which act on the
// current state, see no difference.
//
// Panics. A handler that panics has the panic recovered and reported to the
// ErrorHandler as a *HandlerPanicError; its delivery goes on with the next
// notification and its registration still syncs.
//
// Inside, a Shared is the pipeline the package doc draws: the handlers,
// the mutation detector and checkpoints are subscribers of the one cache
// writer, and HasSynced, WaitForResourceVersion and checkpoints all read
// the one version the cache reflects.
//
// A Shared is safe for concurrent use. Create it with
// NewShared.
type Shared[T cache.Object] struct {
	// Set by NewShared, then read-only.
	name   string
	report func(error)
	clock  clock.WithTicker
	// The queue and the reflector's writer to it, the cache writer, the
	// sync point and the reflector.
	pipeline[T]
	// handlers is the handler set, a subscriber of the cache writer.
	handlers *handlerSet[T]
	// stages are the subscribers with a goroutine of their own (the
	// mutation detector, the checkpointer); Run adds the resync timer.
	stages []stage

	// started is set by the first Run; stopped is closed by Run once
	// everything but the handlers' goroutines has returned.
	started atomic.Bool
	stopped chan struct{}
}

// NewShared builds a shared informer. It does nothing until Run.
func NewShared[T cache.Object](opts Options[T]) (*Shared[T], error) {
	if opts.Source == nil {
		return nil, fmt.Errorf("informer: NewShared: nil Source")
	}
	inf := &Shared[T]{name: opts.Name, report: opts.ErrorHandler, clock: opts.Clock, stopped: make(chan struct{})}
	if inf.name == "" {
		var zero T
		inf.name = fmt.Sprintf("%T", zero)
	}
	if inf.clock == nil {
		inf.clock = clock.RealClock{}
	}
	if inf.report == nil {
		name := inf.name
		inf.report = func(err error) { slog.Error("kinformer informer", "informer", name, "err", err) }
	}
	var im metrics.InformerMetrics
	if opts.Metrics != nil {
		im = opts.Metrics.NewInformerMetrics(inf.name)
	}
	im = im.WithDefaults()
	po := pipelineOptions[T]{
		name: inf.name, source: opts.Source, keyFunc: opts.KeyFunc, indexers: opts.Indexers, transform: opts.Transform,
		report: inf.report, clock: inf.clock, provider: opts.Metrics, metrics: im, settings: opts.Settings,
	}
	p := newPipeline(po)
	inf.pipeline = p

	env, _ := strconv.ParseBool(os.Getenv(MutationDetectorEnv))
	if opts.MutationDetector || env {
		period := opts.MutationCheckPeriod
		if period <= 0 {
			period = time.Second
		}
		d, err := newMutationDetector[T](inf.report, inf.clock, period)
		if err != nil && opts.MutationDetector {
			return nil, fmt.Errorf("informer: NewShared: %w", err)
		}
		if d != nil {
			inf.cache.subscribe(d.changed, nil)
			inf.stages = append(inf.stages, d)
		}
	}
	var (
		resume   func(context.Context) (*reflector.Resume[T], error)
		reflErrs func(error)
	)
	if opts.Checkpoint.Path != "" {
		c, err := newCheckpointer(opts.Checkpoint, inf.name, inf.report, inf.clock, im.Checkpoint, inf.cache, inf.synced)
		if err != nil {
			return nil, fmt.Errorf("informer: NewShared: checkpoint: %w", err)
		}
		inf.cache.subscribe(c.changed, nil)
		inf.stages = append(inf.stages, c)
		resume, reflErrs = c.load, c.reflectorError
	}
	keyFunc := opts.KeyFunc
	if keyFunc == nil {
		keyFunc = cache.MetaNamespaceKey[T]
	}
	inf.handlers = newHandlerSet(inf.name, keyFunc, inf.report, inf.clock, opts.Metrics, opts.ResyncPeriod, &inf.cache.cached)
	inf.cache.subscribe(inf.handlers.changed, nil)
	inf.synced.onSynced = inf.handlers.markSynced
	if err := inf.newReflector(po, resume, reflErrs); err != nil {
		return nil, err
	}
	return inf, nil
}

// Name returns the informer's name.
func (inf *Shared[T]) Name() string { return inf.name }

// Cache returns a read-only view of the informer's cache: gets, lists,
// index look-ups and keys. The informer is the cache's only writer.
// Returned objects are shared and must not be mutated.
func (inf *Shared[T]) Cache() cache.Reader[T] { return inf.cache.indexer.Reader() }

// AddIndexers adds indexes to the cache, before or after Run; objects
// already cached are indexed at once.
func (inf *Shared[T]) AddIndexers(indexers cache.Indexers[T]) error {
	return inf.cache.indexer.AddIndexers(indexers)
}

// HasSynced reports whether the initial list has been cached and handed to
// every handler's queue (not necessarily processed: see
// Registration.HasSynced for that). An informer started from a checkpoint
// (Options.Checkpoint) is synced once the server has confirmed it and
// every difference it found has been applied.
func (inf *Shared[T]) HasSynced() bool { return inf.synced.done() }

// WaitForCacheSync blocks until HasSynced is true, and returns true, or
// until ctx is done, and returns false.
func (inf *Shared[T]) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-inf.synced.ch:
		return true
	case <-ctx.Done():
		return inf.HasSynced()
	}
}

// LastSyncResourceVersion returns the resource version the reflector is
// at: the version of the last list, watch event or bookmark it queued for
// the cache. It is "" before the first list.
func (inf *Shared[T]) LastSyncResourceVersion() string {
	return inf.reflector.LastSyncResourceVersion()
}

// IsStopped reports whether Run has returned (or is returning).
func (inf *Shared[T]) IsStopped() bool {
	select {
	case <-inf.stopped:
		return true
	default:
		return false
	}
}

// Run lists and watches the source, keeps the cache and delivers
// notifications until ctx is done. It blocks until every goroutine it
// started has exited, including handler goroutines: a handler stuck in a
// call keeps Run from returning. Run may be called once; it returns
// ErrAlreadyStarted after that, and nil when ctx ends it.
func (inf *Shared[T]) Run(ctx context.Context) error {
	if !inf.started.CompareAndSwap(false, true) {
		return ErrAlreadyStarted
	}
	stages := slices.Clip(inf.stages)
	if period := inf.handlers.start(); period > 0 {
		stages = append(stages, resyncer{name: inf.name, period: period, clock: inf.clock, synced: inf.synced.ch,
			due: inf.handlers.shouldResync, queue: inf.queue, report: inf.report})
	}
	inf.run(ctx, stages, inf.name, inf.report)
	close(inf.stopped)
	inf.handlers.stop()
	return nil
}

package informer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
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
	// ListWatch tunes how the informer lists and watches the source: page
	// size, streaming lists, watch timeouts, back-off.
	ListWatch reflector.Settings
	// Checkpoint, when its Path is set, saves the cache to a file and
	// starts the next Run from it (see CheckpointOptions).
	Checkpoint CheckpointOptions[T]
}

type runState uint8

const (
	notStarted runState = iota
	running
	stopped
)

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
// A Shared is safe for concurrent use. Create it with
// NewShared.
type Shared[T cache.Object] struct {
	// Set by NewShared, then read-only.
	name    string
	source  listwatch.ListerWatcher[T]
	keyFunc cache.KeyFunc[T]
	// userKey is the KeyFunc of the options, nil if none was given: the
	// reflector checks the default key without building it.
	userKey    cache.KeyFunc[T]
	indexer    *cache.Indexer[T]
	fifo       *cache.DeltaFIFO[T]
	resync     time.Duration
	report     func(error)
	clock      clock.WithTicker
	provider   metrics.Provider
	metrics    metrics.InformerMetrics
	detector   *mutationDetector[T]
	checkEvery time.Duration
	listWatch  reflector.Settings
	// minThreshold is every new listener's minimum merge threshold
	// (minMergeThreshold, lowered by tests).
	minThreshold int

	// cached counts the objects in indexer; written by the pop loop only.
	cached atomic.Int64
	// initialAdds buffers the adds of the initial list not yet handed to
	// the listeners (mu; see bufferInitialLocked).
	initialAdds []keyedNotification[T]
	// reflector is set by Run.
	reflector atomic.Pointer[reflector.Reflector[T]]
	// syncedCh is closed (under mu) when the initial list has been cached
	// and handed to every handler.
	syncedCh chan struct{}
	// runningCh is closed by Run once reflector is set, stoppedCh when Run
	// is about to return (both under mu).
	runningCh, stoppedCh chan struct{}
	// popped wakes version waiters after each key the pop loop processes.
	popped broadcast
	// lag samples the cache's lag (metrics.InformerMetrics.Lag).
	lag lagSampler
	// ckpt is the checkpoint of Options.Checkpoint, nil when off.
	// confirmMark is 0 until the reflector says the cache reflects the
	// server, then 1 + the queue's Enqueued at that moment (see syncable).
	ckpt        *checkpointer[T]
	confirmMark atomic.Uint64
	// wg counts handler delivery goroutines; Run waits for it.
	wg sync.WaitGroup

	// mu serializes applying one key's changes (cache write plus
	// notifications) with adding and removing handlers and with resync
	// decisions, and guards the fields below. Lock order: mu, then a
	// listener's mu, then the indexer's and the mutation detector's locks.
	mu        sync.Mutex
	state     runState
	synced    bool
	listeners []*listener[T]
	// resyncCheck is the reflector's resync period, fixed by Run: the
	// shortest handler period then.
	resyncCheck time.Duration
	nextHandler int
}

// NewShared builds a shared informer. It does nothing until Run.
func NewShared[T cache.Object](opts Options[T]) (*Shared[T], error) {
	if opts.Source == nil {
		return nil, fmt.Errorf("informer: NewShared: nil Source")
	}
	inf := &Shared[T]{
		name:         opts.Name,
		source:       opts.Source,
		keyFunc:      opts.KeyFunc,
		userKey:      opts.KeyFunc,
		resync:       opts.ResyncPeriod,
		report:       opts.ErrorHandler,
		clock:        opts.Clock,
		provider:     opts.Metrics,
		checkEvery:   opts.MutationCheckPeriod,
		listWatch:    opts.ListWatch,
		syncedCh:     make(chan struct{}),
		runningCh:    make(chan struct{}),
		stoppedCh:    make(chan struct{}),
		minThreshold: minMergeThreshold,
	}
	if inf.name == "" {
		var zero T
		inf.name = fmt.Sprintf("%T", zero)
	}
	if inf.keyFunc == nil {
		inf.keyFunc = cache.MetaNamespaceKey[T]
	}
	if inf.clock == nil {
		inf.clock = clock.RealClock{}
	}
	if inf.report == nil {
		name := inf.name
		inf.report = func(err error) { slog.Error("kinformer informer", "informer", name, "err", err) }
	}
	if inf.checkEvery <= 0 {
		inf.checkEvery = time.Second
	}
	if inf.provider != nil {
		inf.metrics = inf.provider.NewInformerMetrics(inf.name)
	}
	inf.metrics = inf.metrics.WithDefaults()

	env, _ := strconv.ParseBool(os.Getenv(MutationDetectorEnv))
	if opts.MutationDetector || env {
		d, err := newMutationDetector[T](inf.report)
		if err != nil && opts.MutationDetector {
			return nil, fmt.Errorf("informer: NewShared: %w", err)
		}
		inf.detector = d
	}
	if opts.Checkpoint.Path != "" {
		c, err := newCheckpointer(opts.Checkpoint, inf.name, inf.report, inf.clock, inf.metrics.Checkpoint)
		if err != nil {
			return nil, fmt.Errorf("informer: NewShared: checkpoint: %w", err)
		}
		inf.ckpt = c
	}
	inf.indexer = cache.NewIndexer(cache.IndexerOptions[T]{KeyFunc: inf.keyFunc, Indexers: opts.Indexers})
	inf.fifo = cache.NewDeltaFIFO(cache.DeltaFIFOOptions[T]{
		KeyFunc:      inf.userKey, // nil: the default, which it keys in bulk
		KnownObjects: inf.indexer,
		Transform:    opts.Transform,
	})
	return inf, nil
}

// Name returns the informer's name.
func (inf *Shared[T]) Name() string { return inf.name }

// Cache returns a read-only view of the informer's cache: gets, lists,
// index look-ups and keys. The informer is the cache's only writer.
// Returned objects are shared and must not be mutated.
func (inf *Shared[T]) Cache() cache.Reader[T] { return inf.indexer.Reader() }

// AddIndexers adds indexes to the cache, before or after Run; objects
// already cached are indexed at once.
func (inf *Shared[T]) AddIndexers(indexers cache.Indexers[T]) error {
	return inf.indexer.AddIndexers(indexers)
}

// HasSynced reports whether the initial list has been cached and handed to
// every handler's queue (not necessarily processed: see
// Registration.HasSynced for that). An informer started from a checkpoint
// (Options.Checkpoint) is synced once the server has confirmed it and
// every difference it found has been applied.
func (inf *Shared[T]) HasSynced() bool {
	select {
	case <-inf.syncedCh:
		return true
	default:
		return false
	}
}

// WaitForCacheSync blocks until HasSynced is true, and returns true, or
// until ctx is done, and returns false.
func (inf *Shared[T]) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-inf.syncedCh:
		return true
	case <-ctx.Done():
		return inf.HasSynced()
	}
}

// LastSyncResourceVersion returns the resource version the cache is at: the
// version of the last list or watch event applied by the reflector. It is
// "" before Run.
func (inf *Shared[T]) LastSyncResourceVersion() string {
	if r := inf.reflector.Load(); r != nil {
		return r.LastSyncResourceVersion()
	}
	return ""
}

// IsStopped reports whether Run has returned (or is returning).
func (inf *Shared[T]) IsStopped() bool {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.state == stopped
}

// Run lists and watches the source, keeps the cache and delivers
// notifications until ctx is done. It blocks until every goroutine it
// started has exited, including handler goroutines: a handler stuck in a
// call keeps Run from returning. Run may be called once; it returns
// ErrAlreadyStarted after that, and nil when ctx ends it.
func (inf *Shared[T]) Run(ctx context.Context) error {
	inf.mu.Lock()
	if inf.state != notStarted {
		inf.mu.Unlock()
		return ErrAlreadyStarted
	}
	inf.resyncCheck = inf.minResyncLocked()
	ropts := reflector.Options[T]{
		Name:         inf.name,
		Source:       inf.source,
		Store:        inf.writer(),
		KeyFunc:      inf.userKey,
		Settings:     inf.listWatch,
		ErrorHandler: inf.report,
		Clock:        inf.clock,
		Metrics:      inf.provider,
		Confirmed:    inf.confirmedByServer,
	}
	if inf.ckpt != nil {
		ropts.Resume, ropts.ErrorHandler = inf.ckpt.load, inf.ckpt.reflectorError
	}
	r, err := reflector.New(ropts)
	if err != nil {
		inf.mu.Unlock()
		return fmt.Errorf("informer %s: %w", inf.name, err)
	}
	inf.reflector.Store(r)
	inf.state = running
	close(inf.runningCh)
	now := inf.clock.Now()
	for _, l := range inf.listeners {
		inf.startLocked(l, now)
	}
	inf.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer inf.fifo.Close() // ends the pop loop below
		if err := r.Run(ctx); err != nil && ctx.Err() == nil {
			inf.report(fmt.Errorf("informer %s: reflector: %w", inf.name, err))
		}
	})
	if inf.detector != nil {
		wg.Go(func() { inf.detector.run(ctx, inf.clock, inf.checkEvery) })
	}
	if inf.resyncCheck > 0 {
		wg.Go(func() { inf.resyncLoop(ctx, inf.resyncCheck) })
	}
	if inf.ckpt != nil {
		wg.Go(func() { inf.ckpt.loop(ctx, inf.snapshot) })
	}
	inf.popLoop(ctx)
	cancel()
	inf.fifo.Close()
	wg.Wait()
	if inf.ckpt != nil && inf.ckpt.pending() && !inf.ckpt.write(inf.snapshot) {
		inf.report(fmt.Errorf("informer %s: no checkpoint written when stopping: changes were still queued (the last one stands)", inf.name))
	}

	inf.mu.Lock()
	inf.state = stopped
	close(inf.stoppedCh)
	for _, l := range inf.listeners {
		l.stop()
	}
	inf.mu.Unlock()
	inf.wg.Wait()
	return nil
}

// popLoop applies the delta queue to the cache until ctx is done or the
// queue is closed.
func (inf *Shared[T]) popLoop(ctx context.Context) {
	for {
		_, err := inf.fifo.Pop(ctx, inf.process)
		if ctx.Err() != nil || inf.fifo.IsClosed() {
			return
		}
		if err != nil {
			inf.report(fmt.Errorf("informer %s: %w", inf.name, err))
		}
		inf.metrics.QueueDepth.Set(float64(inf.fifo.Len()))
		inf.metrics.Objects.Set(float64(inf.cached.Load()))
		inf.popped.notify()
		inf.lag.finish(inf.fifo, inf.clock, inf.metrics.Lag)
		if !inf.HasSynced() && inf.syncable() {
			inf.markSynced()
		}
	}
}

// markSynced records that the initial list has been handed out.
func (inf *Shared[T]) markSynced() {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.synced {
		return
	}
	inf.synced = true
	inf.flushInitialLocked()
	close(inf.syncedCh)
	for _, l := range inf.listeners {
		l.markSynced()
	}
}

// process applies one key's deltas to the cache and notifies handlers. key
// is the one the queue keyed them by (the informer's key function applied
// to their object). Errors are reported after the lock is released, so that
// an error handler may call back into the informer.
func (inf *Shared[T]) process(key string, deltas cache.Deltas[T], initial bool) error {
	if len(deltas) == 0 {
		return nil
	}
	var errs []error
	inf.mu.Lock()
	for _, d := range deltas {
		if err := inf.applyLocked(key, d, initial); err != nil {
			errs = append(errs, fmt.Errorf("informer %s: %s %q: %w", inf.name, d.Type, key, err))
		}
	}
	inf.mu.Unlock()
	for _, err := range errs {
		inf.report(err)
	}
	return nil
}

// applyLocked applies one delta to the cache and hands the matching
// notification to the handlers.
func (inf *Shared[T]) applyLocked(key string, d cache.Delta[T], initial bool) error {
	old, exists, err := inf.indexer.GetByKey(key)
	if err != nil {
		return err
	}
	if d.Type == cache.Deleted {
		if !exists {
			return nil // the handlers never saw it
		}
		if err := inf.indexer.Delete(d.Object); err != nil {
			return err
		}
		inf.cached.Add(-1)
		if inf.ckpt != nil {
			inf.ckpt.changed()
		}
		if inf.detector != nil {
			inf.detector.forget(key)
		}
		inf.distributeLocked(key, notification[T]{kind: deleteNotification, obj: d.Object, unknown: d.StateUnknown}, false)
		return nil
	}
	unchanged := false
	if exists {
		// A resync, or a relist that found the object unchanged, goes only
		// to the handlers whose resync is due, and changes nothing a
		// checkpoint would save. The very object the cache holds (a resync,
		// or a relist that reused it) is not stored again.
		unchanged = d.Type == cache.Sync ||
			d.Type == cache.Replaced && old.GetResourceVersion() == d.Object.GetResourceVersion()
		if any(old) != any(d.Object) {
			if err := inf.indexer.Update(d.Object); err != nil {
				return err
			}
		}
		inf.distributeLocked(key, notification[T]{kind: updateNotification, old: old, obj: d.Object}, unchanged)
	} else {
		if err := inf.indexer.Add(d.Object); err != nil {
			return err
		}
		inf.cached.Add(1)
		n := notification[T]{kind: addNotification, obj: d.Object, initial: initial}
		if initial {
			inf.bufferInitialLocked(key, n)
		} else {
			inf.distributeLocked(key, n, false)
		}
	}
	if inf.detector != nil {
		inf.detector.record(key, d.Object)
	}
	// A checkpoint's own objects (added from an initial entry when
	// resumed) need no new checkpoint; later deltas of those entries do.
	if inf.ckpt != nil && !unchanged && !(initial && !exists && inf.ckpt.resumed.Load()) {
		inf.ckpt.changed()
	}
	return nil
}

func (inf *Shared[T]) distributeLocked(key string, n notification[T], isSync bool) {
	inf.flushInitialLocked()
	for _, l := range inf.listeners {
		if isSync && !l.resyncDue {
			continue
		}
		l.add(key, n)
	}
}

// initialBatch is how many adds of the initial list are handed to the
// listeners at once.
const initialBatch = 256

// bufferInitialLocked queues an add of the initial list for the listeners,
// handing them a batch at a time: one lock and one wake-up per listener and
// batch instead of per object. Order holds because every other way a
// listener gets a notification (distributeLocked, AddHandler) and the end of
// the initial list (markSynced) flush the buffer first; and since the
// initial list is popped before anything else, the last batch is flushed by
// markSynced as soon as it is fully popped.
func (inf *Shared[T]) bufferInitialLocked(key string, n notification[T]) {
	if inf.initialAdds == nil {
		inf.initialAdds = make([]keyedNotification[T], 0, initialBatch)
	}
	inf.initialAdds = append(inf.initialAdds, keyedNotification[T]{key, n})
	if len(inf.initialAdds) == initialBatch {
		inf.flushInitialLocked()
	}
}

// flushInitialLocked hands the buffered initial adds to the listeners.
func (inf *Shared[T]) flushInitialLocked() {
	if len(inf.initialAdds) == 0 {
		return
	}
	for _, l := range inf.listeners {
		l.addAll(inf.initialAdds)
	}
	clear(inf.initialAdds)
	inf.initialAdds = inf.initialAdds[:0]
}

// reserve sizes an empty cache for a list about to fill it, so that its
// maps are sized once instead of growing object by object as the pop loop
// adds them. A cache that holds objects already is left alone: a relist
// mostly updates what is there.
func (inf *Shared[T]) reserve(items []T) {
	if len(items) < 2 || inf.indexer.Len() > 0 {
		return
	}
	inf.indexer.Reserve(items)
}

package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/clusterid"
	"github.com/kinformer/kinformer/internal/listquery"
	"github.com/kinformer/kinformer/kube/internal/source"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/shard"
)

// FactoryOptions configures NewFactory: the defaults of every informer the
// factory makes, and what they share. The zero value watches every
// namespace, without resync, with the reflector's defaults.
type FactoryOptions struct {
	// Namespace is the namespace of informers whose InformerOptions leave
	// it empty; "" means every namespace.
	Namespace string
	// DefaultResync is the resync period of informers whose
	// InformerOptions leave it zero (see informer.Options.ResyncPeriod).
	DefaultResync time.Duration
	// Settings tune how every informer lists and watches (page size,
	// streaming lists, watch timeouts, back-off).
	Settings reflector.Settings
	// ErrorHandler receives every informer's errors (see
	// informer.Options.ErrorHandler). Default: log with log/slog at level
	// Error.
	ErrorHandler func(error)
	// Clock is every informer's clock. Default: the real clock.
	Clock clock.WithTicker
	// Metrics, when set, receives every informer's measurements.
	Metrics metrics.Provider
	// MutationDetector turns the cache mutation detector on for every
	// informer (see informer.Options.MutationDetector) whose objects
	// implement runtime.Object: a view that does not is not checked.
	MutationDetector bool
	// HTTPClient carries every request of every source (it must come from
	// rest.HTTPClientFor of the same config). nil: NewFactory makes one.
	HTTPClient *http.Client
	// DisableInterning and ShareMutableParts set the decoding of the
	// source of every informer of a built-in type: see SourceOptions.
	// String interning is on by default (it is invisible to callers);
	// sharing mutable parts between objects is off unless set here (it
	// saves about half of a pod's memory, and makes an in-place mutation
	// of one object reach every object sharing the part).
	DisableInterning  bool
	ShareMutableParts bool
	// Shard is the shard of informers whose InformerOptions leave
	// Selection.Shard zero: a replica that serves one part of every
	// resource sets it once here. See Selection.Shard.
	Shard shard.Set
	// ShardMetrics, when set, receives the measurements of the shard
	// filter of every sharded informer, under the informer's name.
	ShardMetrics metrics.ShardProvider
	// Checkpoints says where and how often informers that ask for it
	// (InformerOptions.Checkpoint) save their cache, to restart from it.
	Checkpoints Checkpoints
}

// InformerOptions select and configure one informer of a Factory. The
// Resource and Selection (with the type T) are what identify the informer
// (its Key); the other fields configure it when it is created.
type InformerOptions[T cache.Object] struct {
	// Resource names the resource, for the types that can serve any
	// (*unstructured.Unstructured, *metav1.PartialObjectMetadata, a view
	// of a custom resource), typically from Resolve; its Namespaced says
	// whether a namespace applies. For a built-in type, or a view of one
	// (ViewOf), it may be left zero: the type says which resource; when
	// set it must be that one.
	Resource Resource
	// Selection says which objects are cached. An empty Namespace means
	// the factory's; it is ignored for a cluster-scoped resource. A zero
	// Shard means the factory's.
	Selection
	// ResyncPeriod, when not zero, replaces the factory's DefaultResync.
	ResyncPeriod time.Duration
	// Transform, when set, edits or replaces each object before it is
	// cached (see informer.Options.Transform): for example
	// informer.DropManagedFields[*corev1.Pod], which drops managedFields,
	// often a large part of an object's memory.
	Transform func(T) (T, error)
	// Indexers are added to the informer's cache, by whichever call asks
	// for them (indexes it already has are kept as they are).
	Indexers cache.Indexers[T]
	// Checkpoint saves the informer's cache in FactoryOptions.Checkpoints'
	// directory and starts it from there on the next run (see
	// Checkpoints). It needs that directory set.
	Checkpoint bool
}

// runner is what the factory needs of an informer, whatever its T.
type runner interface {
	Run(ctx context.Context) error
	WaitForCacheSync(ctx context.Context) bool
}

// entry is one informer of a Factory and who holds it.
type entry struct {
	informer runner
	// pinned: handed out by Informer, so it lives until Shutdown whatever
	// its references do.
	pinned bool
	// refs counts the Refs not yet released (see Acquire).
	refs int
	// cancel stops the informer's Run; nil until started.
	cancel context.CancelFunc
	// done is closed when the informer's Run has returned; nil until
	// started.
	done chan struct{}
}

func (e *entry) started() bool { return e.done != nil }

// Factory hands out shared informers for a kube-apiserver, the generic
// equivalent of client-go's generated factories: where client-go writes
// factory.Core().V1().Pods(), kinformer writes
//
//	pods, key, err := kube.Informer(ctx, f, kube.InformerOptions[*corev1.Pod]{})
//
// with no code generation. There is one informer per Key — resource,
// namespace, selectors and Go type — per factory, whoever asks for it;
// only the request that creates it configures it (resync, transform), and
// later requests only add indexes.
//
// Every source of a factory shares one HTTP client (so one connection pool)
// and one client-side rate limiter, built from the config's QPS and Burst
// (50 and 100 when both are zero, since client-go's own 5 and 10 starve
// informers listing many resources at start; none when QPS is negative).
// Watches are not rate limited.
//
// Informers needed for a while only — one per custom resource that may be
// uninstalled, per namespace opted in — are taken with a reference count:
// Acquire hands out a Ref, and the last Ref released stops that informer
// and drops it while the others run on (see Ref).
//
// The factory owns the goroutines of the informers it started: Shutdown
// stops them, waits for them, and closes the client's idle connections. A
// Factory is safe for concurrent use. Create it with NewFactory.
type Factory struct {
	// Set by NewFactory, then read-only.
	cfg        *rest.Config // carries the shared RateLimiter
	httpClient *http.Client
	opts       FactoryOptions
	cluster    *clusterid.Reader // names the cluster in checkpoints
	// server is what the informers share about the server's reachability
	// (see newServer); nil when FactoryOptions.Settings.Server was given.
	server *reflector.Server

	// wg counts the Run calls of started informers.
	wg sync.WaitGroup

	// mu guards the fields below. It is never held while waiting for an
	// informer.
	mu        sync.Mutex
	informers map[Key]*entry
	// runCtx is the context of the last Start, under which an informer
	// acquired later (Acquire) starts at once; nil before Start. A context
	// kept in a struct, against the usual rule, because an on-demand
	// informer has no caller context of its own to run under that lives
	// as long as the factory's run (controller-runtime's informer cache
	// keeps its Start context for the same reason).
	runCtx   context.Context
	shutdown bool
	// stopProbe ends the server probe started by the first Start.
	stopProbe context.CancelFunc
}

// NewFactory returns a factory of informers for the server cfg points at.
// cfg is copied, not kept; QPS and Burst both zero become 50 and 100 (see
// Factory). It fails only when no HTTP client can be built from cfg (bad
// TLS files, say).
func NewFactory(cfg *rest.Config, opts FactoryOptions) (*Factory, error) {
	if cfg == nil {
		return nil, fmt.Errorf("kube: NewFactory: nil rest.Config")
	}
	c := rest.CopyConfig(cfg)
	if c.QPS == 0 && c.Burst == 0 {
		c.QPS, c.Burst = listquery.DefaultQPS, listquery.DefaultBurst
	}
	if c.RateLimiter == nil && c.QPS > 0 {
		c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(c.QPS, c.Burst)
	}
	hc := opts.HTTPClient
	if hc == nil {
		var err error
		if hc, err = rest.HTTPClientFor(c); err != nil {
			return nil, fmt.Errorf("kube: NewFactory: HTTP client: %w", err)
		}
	}
	f := &Factory{cfg: c, httpClient: hc, opts: opts, informers: make(map[Key]*entry)}
	f.cluster = newClusterIdentity(f)
	if f.opts.Settings.Server == nil {
		f.server = newServer(c, hc)
		f.opts.Settings.Server = f.server
	}
	return f, nil
}

// ErrShutdown: the factory was shut down, so it hands out no informer (one
// made then would never run, and a wait on it would last until its
// context ended).
var ErrShutdown = errors.New("factory is shut down")

// informerFor returns the informer of T that opts name, creating it with a
// source of k on first use, and its key. hold records the caller's hold on
// its entry (pinLocked, or a Ref's reference), under f.mu, so that no
// release can drop the informer in between.
func informerFor[T cache.Object](f *Factory, k kind[T], opts InformerOptions[T], hold func(Key, *entry)) (*informer.Shared[T], Key, error) {
	res := k.res
	sel := opts.Selection
	if sel.Namespace == "" {
		sel.Namespace = f.opts.Namespace
	}
	if !res.Namespaced {
		sel.Namespace = ""
	}
	if sel.Shard.IsZero() {
		sel.Shard = f.opts.Shard
	}
	key := Key{Resource: res, Selection: sel, Type: typeName[T]()}
	if err := sel.Validate(); err != nil {
		return nil, key, fmt.Errorf("kube: informer %s: %w", key, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return nil, key, fmt.Errorf("kube: informer %s: %w", key, ErrShutdown)
	}
	if e, ok := f.informers[key]; ok {
		inf, ok := e.informer.(*informer.Shared[T])
		if !ok { // two Go types for one resource: only a caller's mistake gets here
			return nil, key, fmt.Errorf("kube: informer %s: already made for %T, asked for %T", key, e.informer, inf)
		}
		if err := addMissingIndexers(inf, opts.Indexers); err != nil {
			return nil, key, fmt.Errorf("kube: informer %s: %w", key, err)
		}
		hold(key, e)
		return inf, key, nil
	}

	so := SourceOptions{Selection: sel, HTTPClient: f.httpClient,
		DisableInterning: f.opts.DisableInterning, ShareMutableParts: f.opts.ShareMutableParts}
	if !sel.Shard.IsZero() && f.opts.ShardMetrics != nil {
		so.ShardMetrics = f.opts.ShardMetrics.NewShardMetrics(key.String())
	}
	b, err := k.newSource(f.cfg, so.internal())
	if err != nil {
		return nil, key, fmt.Errorf("kube: informer %s: new source: %w", key, err)
	}
	src := b.src
	resync := opts.ResyncPeriod
	if resync == 0 {
		resync = f.opts.DefaultResync
	}
	transform := opts.Transform
	ckpt, err := checkpointFor(f, key, b, opts.Checkpoint)
	if err != nil {
		return nil, key, fmt.Errorf("kube: informer %s: %w", key, err)
	}
	// An informer reuses its cached objects on a relist (see
	// internal/source/reuse.go); after checkpointFor, which decodes files
	// plainly.
	lookup := &source.CachedLookup[T]{}
	if src.ReuseCached(lookup) {
		transform = lookup.SkipCached(transform)
	} else {
		lookup = nil
	}
	inf, err := informer.NewShared(informer.Options[T]{
		Checkpoint:       ckpt,
		Name:             key.String(),
		Source:           src,
		Indexers:         opts.Indexers,
		ResyncPeriod:     resync,
		Transform:        transform,
		ErrorHandler:     f.opts.ErrorHandler,
		Clock:            f.opts.Clock,
		Metrics:          f.opts.Metrics,
		MutationDetector: f.opts.MutationDetector && isRuntimeObject[T](), // views may not be
		Settings:         f.opts.Settings,
	})
	if err != nil {
		return nil, key, fmt.Errorf("kube: informer %s: %w", key, err)
	}
	if lookup != nil {
		lookup.SetReader(inf.Cache())
	}
	e := &entry{informer: inf}
	f.informers[key] = e
	hold(key, e)
	return inf, key, nil
}

// pinLocked is the hold of Informer: the informer lives until Shutdown.
func pinLocked(_ Key, e *entry) { e.pinned = true }

// isShutdown reports whether Shutdown was called.
func (f *Factory) isShutdown() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shutdown
}

func addMissingIndexers[T cache.Object](inf *informer.Shared[T], indexers cache.Indexers[T]) error {
	if len(indexers) == 0 {
		return nil
	}
	have := inf.Cache().GetIndexers()
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

// Start starts every informer not started yet, each on a goroutine the
// factory owns, running until ctx is done, its last Ref is released, or
// Shutdown. It does not block, and does nothing once Shutdown was called.
// Informers acquired later (Acquire) start at once under the ctx of the
// last Start; those from Informer wait for the next Start.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return
	}
	f.runCtx = ctx
	f.startProbeLocked(ctx)
	for key, e := range f.informers {
		f.startLocked(ctx, key, e)
	}
}

// startLocked starts e's informer under ctx unless it has started.
func (f *Factory) startLocked(ctx context.Context, key Key, e *entry) {
	if e.started() {
		return
	}
	runCtx, cancel := context.WithCancel(ctx)
	e.cancel, e.done = cancel, make(chan struct{})
	inf, done := e.informer, e.done
	f.wg.Go(func() {
		defer close(done)
		defer cancel()
		if err := inf.Run(runCtx); err != nil {
			f.report(fmt.Errorf("kube: informer %s: %w", key, err))
		}
	})
}

// report hands err to the factory's error handler, or logs it.
func (f *Factory) report(err error) {
	if f.opts.ErrorHandler != nil {
		f.opts.ErrorHandler(err)
		return
	}
	slog.Error("kinformer factory", "err", err)
}

// WaitForCacheSync waits until every started informer has synced, or ctx is
// done, and reports for each whether it synced.
func (f *Factory) WaitForCacheSync(ctx context.Context) map[Key]bool {
	f.mu.Lock()
	started := make(map[Key]runner)
	for key, e := range f.informers {
		if e.started() {
			started[key] = e.informer
		}
	}
	f.mu.Unlock()
	res := make(map[Key]bool, len(started))
	for key, inf := range started {
		res[key] = inf.WaitForCacheSync(ctx)
	}
	return res
}

// Shutdown stops every informer the factory started, waits until all their
// goroutines have exited (including handlers finishing their current call),
// and closes the idle connections of the shared HTTP client. Later Starts
// do nothing, and asking for an informer (Informer, Acquire) fails with
// ErrShutdown. It may be called more than once.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shutdown = true
	f.runCtx = nil
	if f.stopProbe != nil {
		f.stopProbe()
	}
	for _, e := range f.informers {
		if e.cancel != nil {
			e.cancel()
		}
	}
	f.mu.Unlock()
	f.wg.Wait()
	utilnet.CloseIdleConnectionsFor(f.httpClient.Transport)
}

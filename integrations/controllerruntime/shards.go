package controllerruntime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shard/replicas"
)

// Shard shares the objects of one type between the replicas of a manager
// (Options.Shards): each replica caches, and its controllers reconcile, only
// the objects in the hash ranges it owns, and the ranges move between
// replicas as they come and go, through the Leases of package
// shard/replicas.
type Shard struct {
	// Replicas configure the replica's membership in its group (see
	// replicas.GroupOptions). Name (a DNS label naming the group; its
	// Leases are named after it and each replica) and Namespace (where
	// the Leases are) are required, and the group's name must differ
	// between the types of one cache. Client, when nil, is made from the
	// manager's config. Identity defaults to the host name and a random
	// suffix: give each replica its pod's name. Every replica of a group
	// must use the same Slots.
	Replicas replicas.GroupOptions
	// Field is what the ranges hash: shard.UID (the default, which spreads
	// evenly) or shard.Namespace (every object of a namespace in one
	// replica).
	Field shard.Field
}

// shardSpec is a Shard resolved for one kind of one cache.
type shardSpec struct {
	opts Shard
}

// resolveShards keys o.Shards by informer (kind and how it is served),
// checking what can be checked before any informer exists.
func (x *extensions) resolveShards(opts crcache.Options) error {
	if len(x.opts.Shards) == 0 {
		return nil
	}
	if opts.NewInformer != nil {
		return errors.New("controllerruntime.NewCache: Shards cannot be used with cache.Options.NewInformer")
	}
	x.shards = map[entryKey]*shardSpec{}
	names := map[string]string{}
	for obj, s := range x.opts.Shards {
		gvk, err := apiutil.GVKForObject(obj, opts.Scheme)
		if err != nil {
			return fmt.Errorf("controllerruntime.NewCache: Shards: %T: %w", obj, err)
		}
		switch {
		case s.Replicas.Name == "":
			return fmt.Errorf("controllerruntime.NewCache: Shards[%s]: no Replicas.Name", gvk.Kind)
		case s.Replicas.Namespace == "":
			return fmt.Errorf("controllerruntime.NewCache: Shards[%s]: no Replicas.Namespace (where the Leases are)", gvk.Kind)
		}
		if other, ok := names[s.Replicas.Name]; ok {
			return fmt.Errorf("controllerruntime.NewCache: Shards[%s] and Shards[%s] name the same group %q: each type needs its own",
				other, gvk.Kind, s.Replicas.Name)
		}
		names[s.Replicas.Name] = gvk.Kind
		if s.Field == "" {
			s.Field = shard.UID
		}
		if _, err := shard.NewSet(s.Field, shard.Range{}); err != nil {
			return fmt.Errorf("controllerruntime.NewCache: Shards[%s]: %w", gvk.Kind, err)
		}
		if by, ok := byObjectOf(opts, obj, gvk); ok && len(by.Namespaces) > 0 || !ok && len(opts.DefaultNamespaces) > 0 {
			return fmt.Errorf("controllerruntime.NewCache: Shards[%s]: a shard spans every namespace; "+
				"it cannot be used with DefaultNamespaces or ByObject Namespaces (narrow it with selectors)", gvk.Kind)
		}
		x.shards[entryKey{gvk, kindOf(obj)}] = &shardSpec{opts: s}
	}
	return nil
}

// byObjectOf returns the ByObject entry of gvk, whatever object keys it.
func byObjectOf(opts crcache.Options, obj client.Object, gvk schema.GroupVersionKind) (crcache.ByObject, bool) {
	if by, ok := opts.ByObject[obj]; ok {
		return by, true
	}
	for o, by := range opts.ByObject {
		if g, err := apiutil.GVKForObject(o, opts.Scheme); err == nil && g == gvk {
			return by, true
		}
	}
	return crcache.ByObject{}, false
}

// shardedEntry is the informer of a sharded kind: a replicas.Informer of T,
// whose ranges a replicas.Group hands it, seen as one cache.
type shardedEntry[T client.Object] struct {
	// Set by newShardedEntry, then read-only.
	name  string
	inf   *replicas.Informer[T]
	group *replicas.Group

	// mu guards indexers (written only before run, read by every range's
	// informer as it is made, once run has started), running, ended, runCtx
	// and regs, and the calls to wg.Go.
	mu       sync.Mutex
	indexers cache.Indexers[T]
	running  bool
	// ended is set when the group's Run has returned: no goroutine is
	// started from then on.
	ended bool
	// runCtx is run's context, which ends the goroutines of wg.
	runCtx context.Context
	// regs are the registrations added before run, whose synced channels
	// run then watches.
	regs []*shardRegistration[T]
	// wg counts the goroutines that close registrations' synced channels
	// (awaitSynced), one per registration; run waits for them.
	wg sync.WaitGroup
	// stopped is closed when run returns.
	stopped chan struct{}
}

func newShardedEntry[T client.Object](cfg entryConfig, newSrc func(shard.Set) (listwatch.ListerWatcher[T], error), transform func(T) (T, error)) (*shardedEntry[T], error) {
	spec := cfg.shard
	e := &shardedEntry[T]{
		name:     cfg.gvk.String(),
		indexers: cache.Indexers[T]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[T]},
		stopped:  make(chan struct{}),
	}
	io := informer.Options[T]{
		ResyncPeriod: resyncPeriod(cfg.resync),
		Indexers:     e.indexers,
		Transform:    transform,
		ErrorHandler: func(err error) { utilruntime.HandleError(err) },
	}
	if cfg.ext.provider != nil {
		io.Metrics = cfg.ext.provider
	}
	var err error
	e.inf, err = replicas.NewInformer(replicas.InformerOptions[T]{
		Name:      e.name,
		Field:     spec.opts.Field,
		NewSource: newSrc,
		Informer:  io,
	})
	if err != nil {
		return nil, err
	}
	gopts := spec.opts.Replicas
	if gopts.Client == nil {
		c, err := coordinationv1client.NewForConfigAndClient(cfg.restConfig, cfg.httpClient)
		if err != nil {
			return nil, fmt.Errorf("shard of %s: Lease client: %w", cfg.gvk, err)
		}
		gopts.Client = c
	}
	if sp, ok := cfg.ext.provider.(metrics.ShardProvider); ok && gopts.Metrics == nil {
		gopts.Metrics = sp // the group's metrics beside the informers'
	}
	if gopts.Logger == nil { // the group's lines go where the manager's logs go
		gopts.Logger = slog.New(logr.ToSlogHandler(crlog.Log.WithName("shards").WithValues("kind", cfg.gvk.Kind)))
	}
	if gopts.ErrorHandler == nil {
		gopts.ErrorHandler = func(err error) { utilruntime.HandleError(err) }
	}
	if e.group, err = replicas.NewGroup(gopts); err != nil {
		return nil, fmt.Errorf("shard of %s: %w", cfg.gvk, err)
	}
	if err := e.group.Add(e.inf); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *shardedEntry[T]) informer() crcache.Informer { return &shardedInformer[T]{e: e} }

// run takes part in the group until ctx is done, then hands the ranges
// over (replicas.Group.Run's leave, up to a Lease duration).
func (e *shardedEntry[T]) run(ctx context.Context) {
	defer close(e.stopped)
	e.mu.Lock()
	e.running, e.runCtx = true, ctx
	for _, r := range e.regs {
		e.awaitSyncedLocked(r)
	}
	e.regs = nil
	e.mu.Unlock()
	if err := e.group.Run(ctx); err != nil {
		utilruntime.HandleError(fmt.Errorf("shard of %s: %w", e.name, err))
	}
	e.mu.Lock()
	e.ended = true
	e.mu.Unlock()
	e.wg.Wait()
}

// awaitSyncedLocked closes r's synced channel, on a goroutine of e.wg,
// once the replica has owned its share once and r has been handed the
// ranges held when it was added; the goroutine ends then, or when r is
// removed or run's context is done. e.mu is held.
func (e *shardedEntry[T]) awaitSyncedLocked(r *shardRegistration[T]) {
	if e.ended {
		return
	}
	ctx := e.runCtx
	e.wg.Go(func() {
		for _, c := range []<-chan struct{}{e.group.Synced(), r.rr.Synced()} {
			select {
			case <-c:
			case <-r.gone:
				return
			case <-ctx.Done():
				return
			}
		}
		r.syncOnce.Do(func() { close(r.synced) })
	})
}

func (e *shardedEntry[T]) hasSynced() bool {
	select {
	case <-e.group.Synced():
		return true
	default:
		return false
	}
}

func (e *shardedEntry[T]) waitSynced(ctx context.Context) bool {
	select {
	case <-e.group.Synced():
		return true
	case <-e.stopped:
		return false
	case <-ctx.Done():
		return false
	}
}

func (e *shardedEntry[T]) get(namespace, name string) (client.Object, bool) {
	obj, ok := e.inf.Cache().GetByNamespaceName(namespace, name)
	return obj, ok
}

func (e *shardedEntry[T]) list(namespace string) []client.Object {
	c := e.inf.Cache()
	if namespace == "" {
		return upcast(c.List())
	}
	objs, _ := c.ByIndex(cache.NamespaceIndex, namespace) // the index always exists
	return upcast(objs)
}

func (e *shardedEntry[T]) indexFunc(index string) (cache.IndexFunc[T], bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f, ok := e.indexers[index]
	return f, ok
}

func (e *shardedEntry[T]) byIndex(index, value string) ([]client.Object, error) {
	if _, ok := e.indexFunc(index); !ok {
		return nil, fmt.Errorf("index with name %s does not exist", index)
	}
	objs, err := e.inf.Cache().ByIndex(index, value)
	if err != nil {
		return nil, fmt.Errorf("index with name %s does not exist", index)
	}
	return upcast(objs), nil
}

func (e *shardedEntry[T]) indexed(index, value string, obj client.Object) (bool, error) {
	f, ok := e.indexFunc(index)
	return indexGives(f, ok, index, value, obj.(T))
}

// shardedInformer is the controller-runtime Informer of a sharded kind.
type shardedInformer[T client.Object] struct{ e *shardedEntry[T] }

var _ crcache.Informer = (*shardedInformer[*metav1.PartialObjectMetadata])(nil)

// AddEventHandler registers h: it gets OnAdd for every object of a range
// the replica acquires (isInInitialList true) and for objects created in
// its ranges, OnUpdate and OnDelete for changes in them, and nothing when
// a range is released (see the package doc, Shards).
func (s *shardedInformer[T]) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return s.add(h)
}

// AddEventHandlerWithResyncPeriod is AddEventHandler: the handler resyncs
// with the informer's period (SyncPeriod).
func (s *shardedInformer[T]) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, _ time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return s.add(h)
}

// AddEventHandlerWithOptions is AddEventHandler; the options' resync
// period is not used (the informer's is) and neither is the logger.
func (s *shardedInformer[T]) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, _ toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return s.add(h)
}

func (s *shardedInformer[T]) add(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	if h == nil {
		return nil, errors.New("nil handler")
	}
	r := &shardRegistration[T]{e: s.e, h: h, synced: make(chan struct{}), gone: make(chan struct{})}
	rr, err := s.e.inf.AddHandler(r)
	if err != nil {
		return nil, err
	}
	r.rr = rr
	s.e.mu.Lock()
	if s.e.running {
		s.e.awaitSyncedLocked(r)
	} else {
		s.e.regs = append(s.e.regs, r)
	}
	s.e.mu.Unlock()
	return r, nil
}

// RemoveEventHandler stops calls to the handler of handle and takes it out
// of the replica's informer; it returns once no call is in progress.
// Removing a handler twice is not an error; a handle of another informer
// is, and leaves that handle as it was.
func (s *shardedInformer[T]) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*shardRegistration[T])
	if !ok || r.e != s.e {
		return fmt.Errorf("registration %T is not one of this informer's", handle)
	}
	r.mu.Lock()
	if r.removed {
		r.mu.Unlock()
		return nil
	}
	r.removed = true
	close(r.gone)
	r.mu.Unlock()
	s.e.mu.Lock()
	s.e.regs = slices.DeleteFunc(s.e.regs, func(x *shardRegistration[T]) bool { return x == r })
	s.e.mu.Unlock()
	if err := s.e.inf.RemoveHandler(r.rr); err != nil && !errors.Is(err, informer.ErrUnknownRegistration) {
		return err
	}
	return nil
}

// AddIndexers adds indexes. A sharded informer's ranges are each cached
// apart, and each range's cache is made with the indexes known then, so
// indexes can be added only before the cache starts (IndexField during
// the manager's setup, as usual).
func (s *shardedInformer[T]) AddIndexers(indexers toolscache.Indexers) error {
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	if s.e.running {
		return fmt.Errorf("%s is sharded: indexes can be added only before the cache starts", s.e.name)
	}
	for name, f := range indexers {
		if _, ok := s.e.indexers[name]; ok {
			return fmt.Errorf("indexer conflict: %s", name)
		}
		if f == nil {
			return fmt.Errorf("index %s: nil function", name)
		}
	}
	for name, f := range indexers {
		s.e.indexers[name] = func(obj T) ([]string, error) { return f(obj) }
	}
	return nil
}

// HasSynced reports whether the replica has owned its whole share once.
func (s *shardedInformer[T]) HasSynced() bool { return s.e.hasSynced() }

// HasSyncedChecker returns a DoneChecker for HasSynced.
func (s *shardedInformer[T]) HasSyncedChecker() toolscache.DoneChecker {
	return doneChecker{name: "sharded informer " + s.e.name, done: s.e.group.Synced()}
}

// IsStopped reports whether the informer has stopped.
func (s *shardedInformer[T]) IsStopped() bool {
	select {
	case <-s.e.stopped:
		return true
	default:
		return false
	}
}

// shardRegistration is a client-go handler on a sharded informer: a
// replicas.Handler that hands acquisitions to OnAdd and releases to no
// one.
type shardRegistration[T client.Object] struct {
	e  *shardedEntry[T]
	h  toolscache.ResourceEventHandler
	rr *replicas.Registration // set before the registration is returned

	// mu is held during each call to h and guards removed.
	mu      sync.Mutex
	removed bool
	// gone is closed when the registration is removed.
	gone chan struct{}

	// synced is closed, once, when HasSynced first reports true.
	syncOnce sync.Once
	synced   chan struct{}
}

// HasSynced reports whether the replica has owned its whole share once and
// the handler has been handed the ranges held when it was added.
func (r *shardRegistration[T]) HasSynced() bool {
	select {
	case <-r.synced:
		return true
	default:
	}
	if r.rr == nil || !r.e.hasSynced() || !r.rr.HasSynced() {
		return false
	}
	r.syncOnce.Do(func() { close(r.synced) })
	return true
}

// HasSyncedChecker returns a DoneChecker for HasSynced.
func (r *shardRegistration[T]) HasSyncedChecker() toolscache.DoneChecker {
	return doneChecker{name: "event handler of sharded " + r.e.name, done: r.synced}
}

func (r *shardRegistration[T]) call(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.removed {
		f()
	}
}

func (r *shardRegistration[T]) OnAcquire(obj T) { r.call(func() { r.h.OnAdd(obj, true) }) }

// OnRelease tells the handler nothing: the object was not deleted, and a
// controller's reconcile of its key would find it gone from this cache.
func (r *shardRegistration[T]) OnRelease(T) {}

func (r *shardRegistration[T]) OnAdd(obj T, isInInitialList bool) {
	r.call(func() { r.h.OnAdd(obj, isInInitialList) })
}

func (r *shardRegistration[T]) OnUpdate(oldObj, newObj T) {
	r.call(func() { r.h.OnUpdate(oldObj, newObj) })
}

func (r *shardRegistration[T]) OnDelete(obj T, stateUnknown bool) {
	r.call(func() {
		if !stateUnknown {
			r.h.OnDelete(obj)
			return
		}
		key, _ := cache.MetaNamespaceKey(obj)
		r.h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: key, Obj: obj})
	})
}

// shardTransform is the transform of a sharded informer: prepare (nil for
// none), then the cache's transform (client-go's, nil for none).
func shardTransform[T client.Object](prepare func(T) (T, error), user toolscache.TransformFunc) func(T) (T, error) {
	if user == nil {
		return prepare
	}
	return func(obj T) (T, error) {
		var zero T
		if prepare != nil {
			var err error
			if obj, err = prepare(obj); err != nil {
				return zero, err
			}
		}
		out, err := user(obj)
		if err != nil {
			return zero, err
		}
		t, ok := out.(T)
		if !ok {
			return zero, fmt.Errorf("transform returned %T, want %T", out, zero)
		}
		return t, nil
	}
}

package controllerruntime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// defaultSyncPeriod is controller-runtime's resync period when none is set.
const defaultSyncPeriod = 10 * time.Hour

// entryKind separates the informers of one kind by how objects are served,
// as controller-runtime does: a Go type, unstructured, or metadata only.
type entryKind uint8

const (
	structured entryKind = iota
	unstructuredKind
	metadataKind
)

func kindOf(obj runtime.Object) entryKind {
	switch obj.(type) {
	case runtime.Unstructured:
		return unstructuredKind
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return metadataKind
	}
	return structured
}

type entryKey struct {
	gvk  schema.GroupVersionKind
	kind entryKind
}

// tracked is one informer of an informerCache and how it is read.
type tracked struct {
	e          entry
	gvk        schema.GroupVersionKind
	namespaced bool
	// cancel stops the informer's Run; nil until it runs.
	cancel context.CancelFunc
}

// informerCache is the cache of one namespace ("" for all) with one
// configuration: one kinformer informer per kind, made on first use.
type informerCache struct {
	// ext are the opt-ins of NewCache; nil for none.
	ext           *extensions
	restConfig    *rest.Config
	httpClient    *http.Client
	scheme        *runtime.Scheme
	mapper        apimeta.RESTMapper
	namespace     string
	config        crcache.Config
	watchErr      toolscache.WatchErrorHandlerWithContext
	failOnMissing bool
	// newInformer is Options.NewInformer: nil for kinformer's informers.
	newInformer newInformerFunc

	// mu guards entries, started, stopped and runCtx.
	mu      sync.Mutex
	entries map[entryKey]*tracked
	started bool
	stopped bool
	// runCtx is Start's context. controller-runtime's contract is that an
	// informer asked for after Start runs until Start's context ends, so it
	// is kept here (set once by Start) to start such informers; nothing else
	// uses it.
	runCtx context.Context
	// startedCh is closed by Start.
	startedCh chan struct{}
	// wg counts the running informers; Start waits for it.
	wg sync.WaitGroup
}

func newInformerCache(cfg *rest.Config, opts cacheOptions, config crcache.Config, namespace string) *informerCache {
	return &informerCache{
		ext:           opts.ext,
		restConfig:    cfg,
		httpClient:    opts.HTTPClient,
		scheme:        opts.Scheme,
		mapper:        opts.Mapper,
		namespace:     namespace,
		config:        config,
		watchErr:      opts.DefaultWatchErrorHandler,
		failOnMissing: opts.ReaderFailOnMissingInformer,
		newInformer:   opts.NewInformer,
		entries:       map[entryKey]*tracked{},
		startedCh:     make(chan struct{}),
	}
}

var _ crcache.Cache = (*informerCache)(nil)

// lookup returns the informer of gvk for obj's kind, making it (and running
// it, once the cache has started) unless failOnMissing is set; then, unless
// told not to, it waits for the informer to sync when the cache has started.
func (c *informerCache) lookup(ctx context.Context, gvk schema.GroupVersionKind, obj runtime.Object, failOnMissing bool, opts crcache.InformerGetOptions) (*tracked, bool, error) {
	t, started, fresh, err := c.lookupOrAdd(gvk, obj, failOnMissing)
	if err != nil {
		return nil, started, err
	}
	if ptr.Deref(opts.BlockUntilSynced, true) && started && (fresh || !t.e.hasSynced()) {
		// An informer this call made had not synced when it was asked for,
		// so a context already done is a timeout even if the informer syncs
		// before the next line (a fast one can).
		if (fresh && ctx.Err() != nil) || !t.e.waitSynced(ctx) {
			return nil, started, apierrors.NewTimeoutError(fmt.Sprintf("failed waiting for %T Informer to sync", obj), 0)
		}
	}
	return t, started, nil
}

// lookupOrAdd returns the informer of gvk for obj's kind, whether the cache
// has started, and whether the informer was made by this call.
func (c *informerCache) lookupOrAdd(gvk schema.GroupVersionKind, obj runtime.Object, failOnMissing bool) (t *tracked, started, fresh bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := entryKey{gvk, kindOf(obj)}
	if t, ok := c.entries[key]; ok {
		return t, c.started, false, nil
	}
	if failOnMissing {
		return nil, c.started, false, &crcache.ErrResourceNotCached{GVK: gvk}
	}
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, c.started, false, err
	}
	namespaced := mapping.Scope.Name() == apimeta.RESTScopeNameNamespace
	ec := entryConfig{
		ext:        c.ext,
		restConfig: c.restConfig,
		httpClient: c.httpClient,
		gvk:        gvk,
		mapping:    mapping,
		resync:     ptr.Deref(c.config.SyncPeriod, defaultSyncPeriod),
		transform:  c.config.Transform,
		watchErr:   c.watchErr,
	}
	if namespaced {
		ec.namespace = namespaceOf(c.namespace, c.config)
	}
	if c.ext != nil {
		ec.shard = c.ext.shards[key]
	}
	if c.config.LabelSelector != nil {
		ec.label = c.config.LabelSelector.String()
	}
	if c.config.FieldSelector != nil {
		ec.field = c.config.FieldSelector.String()
	}
	var e entry
	if c.newInformer != nil {
		e, err = newInformerEntry(ec, obj, c.scheme, c.newInformer)
	} else {
		e, err = newEntry(ec, obj, c.scheme)
	}
	if err != nil {
		return nil, c.started, false, err
	}
	t = &tracked{e: e, gvk: gvk, namespaced: namespaced}
	c.entries[key] = t
	if c.started {
		c.runLocked(t)
	}
	return t, c.started, true, nil
}

// namespaceOf is the namespace to watch: the cache's, or the one a field
// selector on metadata.namespace pins.
func namespaceOf(namespace string, config crcache.Config) string {
	if namespace != "" || config.FieldSelector == nil || config.FieldSelector.Empty() {
		return namespace
	}
	ns, _ := config.FieldSelector.RequiresExactMatch("metadata.namespace")
	return ns
}

func (c *informerCache) runLocked(t *tracked) {
	if c.stopped {
		return
	}
	ctx, cancel := context.WithCancel(c.runCtx)
	t.cancel = cancel
	c.wg.Go(func() { t.e.run(ctx) })
}

// Start runs every informer made so far and every one made later, until ctx
// is done; it then waits for all of them to stop. It fails if called twice.
func (c *informerCache) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New("informer already started")
	}
	c.started = true
	c.runCtx = ctx
	for _, t := range c.entries {
		c.runLocked(t)
	}
	close(c.startedCh)
	c.mu.Unlock()

	<-ctx.Done()
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.wg.Wait()
	return nil
}

// NeedLeaderElection returns false: like controller-runtime's cache, a cache
// added to a manager (mgr.Add) starts on every replica, not only on the
// elected leader, so that followers' reads are served too.
func (c *informerCache) NeedLeaderElection() bool { return false }

// WaitForCacheSync waits for Start, then for every informer to sync, and
// reports false if ctx ends first.
func (c *informerCache) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-c.startedCh:
	case <-ctx.Done():
		return false
	}
	c.mu.Lock()
	all := make([]*tracked, 0, len(c.entries))
	for _, t := range c.entries {
		all = append(all, t)
	}
	c.mu.Unlock()
	for _, t := range all {
		if !t.e.waitSynced(ctx) {
			return false
		}
	}
	return true
}

// GetInformer returns the informer of obj's kind, making it on first use.
func (c *informerCache) GetInformer(ctx context.Context, obj client.Object, opts ...crcache.InformerGetOption) (crcache.Informer, error) {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return nil, err
	}
	t, _, err := c.lookup(ctx, gvk, obj, false, getOptions(opts))
	if err != nil {
		return nil, err
	}
	return t.e.informer(), nil
}

// GetInformerForKind returns the informer of the typed objects of gvk.
func (c *informerCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...crcache.InformerGetOption) (crcache.Informer, error) {
	obj, err := c.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	t, _, err := c.lookup(ctx, gvk, obj, false, getOptions(opts))
	if err != nil {
		return nil, err
	}
	return t.e.informer(), nil
}

func getOptions(opts []crcache.InformerGetOption) crcache.InformerGetOptions {
	var o crcache.InformerGetOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// RemoveInformer stops obj's kind's informer, if any, and forgets it.
func (c *informerCache) RemoveInformer(_ context.Context, obj client.Object) error {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := entryKey{gvk, kindOf(obj)}
	if t, ok := c.entries[key]; ok {
		if t.cancel != nil {
			t.cancel()
		}
		delete(c.entries, key)
	}
	return nil
}

// IndexField adds an index on field, as controller-runtime names and fills
// it, so that List with a field selector on it (client.MatchingFields)
// reads the index.
func (c *informerCache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	inf, err := c.GetInformer(ctx, obj, crcache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	return inf.AddIndexers(toolscache.Indexers{fieldIndexName(field): fieldIndexFunc(extract)})
}

// fieldIndexName and namespacedValue name indexes and their values as
// controller-runtime does, so the two caches answer the same selectors:
// values of a namespaced object are filed both under its namespace and
// under every namespace.
func fieldIndexName(field string) string { return "field:" + field }

const allNamespacesValue = "__all_namespaces"

func namespacedValue(namespace, value string) string {
	if namespace == "" {
		namespace = allNamespacesValue
	}
	return namespace + "/" + value
}

func fieldIndexFunc(extract client.IndexerFunc) toolscache.IndexFunc {
	return func(raw any) ([]string, error) {
		obj, ok := raw.(client.Object)
		if !ok {
			return nil, fmt.Errorf("object of type %T is not an Object", raw)
		}
		vals := extract(obj)
		ns := obj.GetNamespace()
		out := make([]string, 0, 2*len(vals))
		for _, v := range vals {
			out = append(out, namespacedValue(ns, v))
		}
		if ns != "" {
			for _, v := range vals {
				out = append(out, namespacedValue("", v))
			}
		}
		return out, nil
	}
}

// cacheTypeFor returns the kind a list holds and an empty object of it.
func cacheTypeFor(list client.ObjectList, scheme *runtime.Scheme) (schema.GroupVersionKind, runtime.Object, error) {
	gvk, err := apiutil.GVKForObject(list, scheme)
	if err != nil {
		return gvk, nil, err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	switch list.(type) {
	case runtime.Unstructured:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return gvk, u, nil
	case *metav1.PartialObjectMetadataList:
		p := &metav1.PartialObjectMetadata{}
		p.SetGroupVersionKind(gvk)
		return gvk, p, nil
	}
	obj, err := scheme.New(gvk)
	return gvk, obj, err
}

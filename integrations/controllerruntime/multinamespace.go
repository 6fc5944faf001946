package controllerruntime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// multiNamespaceCache caches a few namespaces, one informerCache each (the
// key "" caching every namespace not named), plus, when cluster is set, one
// for cluster-scoped kinds.
type multiNamespaceCache struct {
	scheme  *runtime.Scheme
	mapper  apimeta.RESTMapper
	byNS    map[string]*informerCache
	cluster *informerCache // nil: cluster-scoped kinds are not cached
}

func newMultiNamespaceCache(cfg *rest.Config, opts cacheOptions, namespaces map[string]crcache.Config, global *crcache.Config) *multiNamespaceCache {
	m := &multiNamespaceCache{scheme: opts.Scheme, mapper: opts.Mapper, byNS: map[string]*informerCache{}}
	for ns, c := range namespaces {
		m.byNS[ns] = newInformerCache(cfg, opts, c, ns)
	}
	if global != nil {
		m.cluster = newInformerCache(cfg, opts, *global, metav1.NamespaceAll)
	}
	return m
}

func (m *multiNamespaceCache) caches() []crcache.Cache {
	var out []crcache.Cache
	for _, ns := range slices.Sorted(maps.Keys(m.byNS)) {
		out = append(out, m.byNS[ns])
	}
	if m.cluster != nil {
		out = append(out, m.cluster)
	}
	return out
}

func (m *multiNamespaceCache) namespaced(obj runtime.Object) (bool, error) {
	return apiutil.IsObjectNamespaced(obj, m.scheme, m.mapper)
}

func (m *multiNamespaceCache) clusterCache() (*informerCache, error) {
	if m.cluster == nil {
		return nil, errors.New("cluster-scoped objects are not cached by this namespaced cache")
	}
	return m.cluster, nil
}

// forNamespace is the cache of namespace, or of every other namespace.
func (m *multiNamespaceCache) forNamespace(namespace string) (*informerCache, bool) {
	if c, ok := m.byNS[namespace]; ok {
		return c, true
	}
	c, ok := m.byNS[metav1.NamespaceAll]
	return c, ok
}

func (m *multiNamespaceCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	namespaced, err := m.namespaced(obj)
	if err != nil {
		return err
	}
	if !namespaced {
		c, err := m.clusterCache()
		if err != nil {
			return err
		}
		return c.Get(ctx, key, obj, opts...)
	}
	c, ok := m.forNamespace(key.Namespace)
	if !ok {
		return fmt.Errorf("unable to get: %v because of unknown namespace for the cache", key)
	}
	return c.Get(ctx, key, obj, opts...)
}

// List lists one namespace's cache, or, for every namespace, each cache in
// turn (Limit counting across them).
func (m *multiNamespaceCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	var o client.ListOptions
	o.ApplyOptions(opts)
	if o.Continue != "" {
		return errors.New("continue list option is not supported by the cache")
	}
	namespaced, err := m.namespaced(list)
	if err != nil {
		return err
	}
	if !namespaced {
		c, err := m.clusterCache()
		if err != nil {
			return err
		}
		return c.List(ctx, list, opts...)
	}
	if o.Namespace != metav1.NamespaceAll {
		c, ok := m.forNamespace(o.Namespace)
		if !ok {
			return fmt.Errorf("unable to list: %v because of unknown namespace for the cache", o.Namespace)
		}
		return c.List(ctx, list, opts...)
	}
	var all []runtime.Object
	for _, ns := range slices.Sorted(maps.Keys(m.byNS)) {
		part := list.DeepCopyObject().(client.ObjectList)
		if err := m.byNS[ns].List(ctx, part, &o); err != nil {
			return err
		}
		items, err := apimeta.ExtractList(part)
		if err != nil {
			return err
		}
		all = append(all, items...)
		if o.Limit > 0 {
			if o.Limit -= int64(len(items)); o.Limit <= 0 {
				break
			}
		}
	}
	if err := apimeta.SetList(list, all); err != nil {
		return err
	}
	list.SetContinue("continue-not-supported")
	return nil
}

func (m *multiNamespaceCache) GetInformer(ctx context.Context, obj client.Object, opts ...crcache.InformerGetOption) (crcache.Informer, error) {
	return m.informer(obj, func(c *informerCache) (crcache.Informer, error) { return c.GetInformer(ctx, obj, opts...) })
}

func (m *multiNamespaceCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...crcache.InformerGetOption) (crcache.Informer, error) {
	obj, err := m.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	return m.informer(obj, func(c *informerCache) (crcache.Informer, error) { return c.GetInformerForKind(ctx, gvk, opts...) })
}

// informer returns get's informer of the cluster cache for a cluster-scoped
// kind, or one informer over get's informers of every namespace.
func (m *multiNamespaceCache) informer(obj runtime.Object, get func(*informerCache) (crcache.Informer, error)) (crcache.Informer, error) {
	namespaced, err := m.namespaced(obj)
	if err != nil {
		return nil, err
	}
	if !namespaced {
		c, err := m.clusterCache()
		if err != nil {
			return nil, err
		}
		return get(c)
	}
	multi := &multiInformer{}
	for _, ns := range slices.Sorted(maps.Keys(m.byNS)) {
		inf, err := get(m.byNS[ns])
		if err != nil {
			return nil, err
		}
		multi.infs = append(multi.infs, inf)
	}
	return multi, nil
}

func (m *multiNamespaceCache) RemoveInformer(ctx context.Context, obj client.Object) error {
	for _, c := range m.caches() {
		if err := c.RemoveInformer(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

func (m *multiNamespaceCache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	namespaced, err := m.namespaced(obj)
	if err != nil {
		return err
	}
	if !namespaced {
		c, err := m.clusterCache()
		if err != nil {
			return err
		}
		return c.IndexField(ctx, obj, field, extract)
	}
	for _, c := range m.byNS {
		if err := c.IndexField(ctx, obj, field, extract); err != nil {
			return err
		}
	}
	return nil
}

func (m *multiNamespaceCache) Start(ctx context.Context) error { return startAll(ctx, m.caches()) }

// NeedLeaderElection returns false, as informerCache's does.
func (m *multiNamespaceCache) NeedLeaderElection() bool { return false }

func (m *multiNamespaceCache) WaitForCacheSync(ctx context.Context) bool {
	for _, c := range m.caches() {
		if !c.WaitForCacheSync(ctx) {
			return false
		}
	}
	return true
}

// multiInformer is one informer over the informers of several namespaces:
// a handler is added to each, and is synced once it is synced on each.
type multiInformer struct{ infs []crcache.Informer }

// multiRegistration is a handler's registrations, one per namespace. It is a
// pointer, so that handles stay comparable.
type multiRegistration struct {
	regs []toolscache.ResourceEventHandlerRegistration // in the informers' order
}

func (r *multiRegistration) HasSynced() bool {
	for _, reg := range r.regs {
		if !reg.HasSynced() {
			return false
		}
	}
	return true
}

func (r *multiRegistration) HasSyncedChecker() toolscache.DoneChecker {
	checkers := make([]toolscache.DoneChecker, 0, len(r.regs))
	for _, reg := range r.regs {
		checkers = append(checkers, reg.HasSyncedChecker())
	}
	return allDone(checkers)
}

func (m *multiInformer) add(add func(crcache.Informer) (toolscache.ResourceEventHandlerRegistration, error)) (toolscache.ResourceEventHandlerRegistration, error) {
	regs := &multiRegistration{}
	for i, inf := range m.infs {
		reg, err := add(inf)
		if err != nil {
			for j, r := range regs.regs {
				_ = m.infs[j].RemoveEventHandler(r)
			}
			return nil, fmt.Errorf("namespace informer %d: %w", i, err)
		}
		regs.regs = append(regs.regs, reg)
	}
	return regs, nil
}

func (m *multiInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return m.add(func(i crcache.Informer) (toolscache.ResourceEventHandlerRegistration, error) {
		return i.AddEventHandler(h)
	})
}

func (m *multiInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, p time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return m.add(func(i crcache.Informer) (toolscache.ResourceEventHandlerRegistration, error) {
		return i.AddEventHandlerWithResyncPeriod(h, p)
	})
}

func (m *multiInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return m.add(func(i crcache.Informer) (toolscache.ResourceEventHandlerRegistration, error) {
		return i.AddEventHandlerWithOptions(h, o)
	})
}

func (m *multiInformer) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	regs, ok := handle.(*multiRegistration)
	if !ok || len(regs.regs) != len(m.infs) {
		return fmt.Errorf("registration %T was not made by this informer", handle)
	}
	var errs []error
	for i, reg := range regs.regs {
		errs = append(errs, m.infs[i].RemoveEventHandler(reg))
	}
	return errors.Join(errs...)
}

func (m *multiInformer) AddIndexers(indexers toolscache.Indexers) error {
	for _, inf := range m.infs {
		if err := inf.AddIndexers(indexers); err != nil {
			return err
		}
	}
	return nil
}

func (m *multiInformer) HasSynced() bool {
	for _, inf := range m.infs {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

func (m *multiInformer) HasSyncedChecker() toolscache.DoneChecker {
	checkers := make([]toolscache.DoneChecker, 0, len(m.infs))
	for _, inf := range m.infs {
		checkers = append(checkers, inf.HasSyncedChecker())
	}
	return allDone(checkers)
}

func (m *multiInformer) IsStopped() bool {
	for _, inf := range m.infs {
		if inf.IsStopped() {
			return true
		}
	}
	return false
}

// allDone is a DoneChecker done when every checker is. Its channel is made
// by the first call to Done, with one goroutine that waits for the checkers
// and exits once all are done; a checker never done keeps it waiting
// (as it keeps whoever waits on the channel).
func allDone(checkers []toolscache.DoneChecker) toolscache.DoneChecker {
	if len(checkers) == 1 {
		return checkers[0]
	}
	done := make(chan struct{})
	pending := false
	for _, c := range checkers {
		if !toolscache.IsDone(c) {
			pending = true
		}
	}
	if !pending {
		close(done)
		return doneChecker{name: "all namespaces", done: done}
	}
	go func() {
		for _, c := range checkers {
			<-c.Done()
		}
		close(done)
	}()
	return doneChecker{name: "all namespaces", done: done}
}

type doneChecker struct {
	name string
	done <-chan struct{}
}

func (d doneChecker) Name() string          { return d.name }
func (d doneChecker) Done() <-chan struct{} { return d.done }

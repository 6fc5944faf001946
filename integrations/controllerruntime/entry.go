package controllerruntime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/integrations/clientgo"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
)

// entry is one informer of the cache: a kinformer shared informer of some
// Go type T, seen through client.Object so the cache can hold every type in
// one map. Reads return the cached objects themselves (shared: the reader
// deep-copies them unless told not to).
type entry interface {
	// informer is the informer handed to controller-runtime (the clientgo
	// adapter, which implements cache.Informer).
	informer() crcache.Informer
	get(namespace, name string) (client.Object, bool)
	// list returns the objects of namespace ("" for every namespace).
	list(namespace string) []client.Object
	byIndex(index, value string) ([]client.Object, error)
	// indexed reports whether obj has value under index.
	indexed(index, value string, obj client.Object) (bool, error)
	run(ctx context.Context)
	hasSynced() bool
	// waitSynced blocks until the informer has synced or ctx is done, and
	// reports whether it synced.
	waitSynced(ctx context.Context) bool
}

// typedEntry is an entry over an informer of T.
type typedEntry[T client.Object] struct {
	sii *clientgo.SharedIndexInformer[T]
}

// entryConfig is what an informer is made from.
type entryConfig struct {
	restConfig *rest.Config
	httpClient *http.Client
	gvk        schema.GroupVersionKind
	mapping    *meta.RESTMapping
	namespace  string // "" for all, or a cluster-scoped resource
	label      string
	field      string
	resync     time.Duration
	transform  toolscache.TransformFunc
	watchErr   toolscache.WatchErrorHandlerWithContext
	// ext are the cache's opt-ins (NewCache); nil for none.
	ext *extensions
	// prepare, when set, runs on every object before the user's transform
	// (metadata-only objects get their real kind there).
	prepare func(client.Object)
	// shard, when set, shares the kind between replicas (Options.Shards).
	shard *shardSpec
}

// sourceOptions are the options of every source of the cache. Typed sources
// share byte-identical mutable parts between objects (kube.SourceOptions.
// ShareMutableParts), which halves a pod's memory: safe here, because
// controller-runtime's contract already forbids mutating cached objects —
// reads hand out deep copies, and handlers and UnsafeDisableDeepCopy reads
// must copy before they mutate.
func (c entryConfig) sourceOptions(set shard.Set) kube.SourceOptions {
	return kube.SourceOptions{
		Selection:         kube.Selection{Namespace: c.namespace, LabelSelector: c.label, FieldSelector: c.field, Shard: set},
		HTTPClient:        c.httpClient,
		ShareMutableParts: true,
	}
}

// anyResourceOptions are sourceOptions naming the mapping's resource, for
// the unstructured and metadata-only sources (kube.Source of those types
// makes no request when it is made, hence the background context of its
// callers).
func (c entryConfig) anyResourceOptions(set shard.Set) kube.SourceOptions {
	so := c.sourceOptions(set)
	so.Resource = kube.Resource{GVR: c.mapping.Resource, Kind: c.mapping.GroupVersionKind.Kind,
		Namespaced: c.mapping.Scope.Name() == meta.RESTScopeNameNamespace}
	return so
}

// resyncPeriod spreads informers' resyncs over ±10% of the period, as
// controller-runtime does, so they do not all come at once.
func resyncPeriod(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + rand.Float64()/5))
}

// newTypedEntry makes the informer of cfg, of objects T from the sources
// newSrc makes: one source of every object (newSrc of the zero Set), or,
// for a sharded kind (cfg.shard), one per hash range (shards.go).
func newTypedEntry[T client.Object](cfg entryConfig, newSrc func(shard.Set) (listwatch.ListerWatcher[T], error)) (entry, error) {
	var prepare func(T) (T, error)
	if cfg.prepare != nil {
		prepare = func(obj T) (T, error) { cfg.prepare(obj); return obj, nil }
	}
	if cfg.shard != nil {
		return newShardedEntry(cfg, newSrc, shardTransform(prepare, cfg.transform))
	}
	src, err := newSrc(shard.Set{})
	if err != nil {
		return nil, err
	}
	io := informer.Options[T]{
		Name:         cfg.gvk.String(),
		Source:       src,
		ResyncPeriod: resyncPeriod(cfg.resync),
		Indexers:     cache.Indexers[T]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[T]},
		Transform:    prepare,
	}
	if err := extendInformer(cfg, src, &io); err != nil {
		return nil, err
	}
	sii, err := clientgo.New(clientgo.Options[T]{Informer: io})
	if err != nil {
		return nil, err
	}
	if cfg.ext != nil {
		trackProgress(cfg.ext.progress, sii.Shared())
	}
	if cfg.transform != nil {
		if err := sii.SetTransform(cfg.transform); err != nil {
			return nil, err
		}
	}
	if cfg.watchErr != nil {
		if err := sii.SetWatchErrorHandlerWithContext(cfg.watchErr); err != nil {
			return nil, err
		}
	}
	return &typedEntry[T]{sii: sii}, nil
}

func (e *typedEntry[T]) informer() crcache.Informer { return e.sii }
func (e *typedEntry[T]) run(ctx context.Context)    { e.sii.RunWithContext(ctx) }
func (e *typedEntry[T]) hasSynced() bool            { return e.sii.HasSynced() }
func (e *typedEntry[T]) waitSynced(ctx context.Context) bool {
	return e.sii.Shared().WaitForCacheSync(ctx)
}

func (e *typedEntry[T]) get(namespace, name string) (client.Object, bool) {
	obj, ok := e.sii.Shared().Cache().GetByNamespaceName(namespace, name)
	return obj, ok
}

func (e *typedEntry[T]) list(namespace string) []client.Object {
	c := e.sii.Shared().Cache()
	if namespace == "" {
		return upcast(c.List())
	}
	objs, _ := c.ByIndex(cache.NamespaceIndex, namespace) // the index always exists
	return upcast(objs)
}

func (e *typedEntry[T]) byIndex(index, value string) ([]client.Object, error) {
	objs, err := e.sii.Shared().Cache().ByIndex(index, value)
	if err != nil {
		return nil, fmt.Errorf("index with name %s does not exist", index)
	}
	return upcast(objs), nil
}

func (e *typedEntry[T]) indexed(index, value string, obj client.Object) (bool, error) {
	f, ok := e.sii.Shared().Cache().GetIndexers()[index]
	return indexGives(f, ok, index, value, obj.(T))
}

// indexGives reports whether f, the index named index (ok: it exists),
// gives obj the value, with controller-runtime's error for a missing index.
func indexGives[T cache.Object](f cache.IndexFunc[T], ok bool, index, value string, obj T) (bool, error) {
	if !ok {
		return false, fmt.Errorf("index with name %s does not exist", index)
	}
	vals, err := f(obj)
	if err != nil {
		return false, err
	}
	return slices.Contains(vals, value), nil
}

func upcast[T client.Object](objs []T) []client.Object {
	out := make([]client.Object, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

// newEntry makes the informer for obj's kind: a typed kinformer source for
// the built-in types it knows (protobuf, interned strings), a dynamic one for
// unstructured objects, a metadata one for PartialObjectMetadata, and for any
// other Go type (custom resources) a dynamic source whose objects are
// converted into that type.
func newEntry(cfg entryConfig, obj runtime.Object, scheme *runtime.Scheme) (entry, error) {
	switch obj.(type) {
	case runtime.Unstructured:
		return newTypedEntry(cfg, func(set shard.Set) (listwatch.ListerWatcher[*unstructured.Unstructured], error) {
			return kube.Source[*unstructured.Unstructured](context.Background(), cfg.restConfig, cfg.anyResourceOptions(set))
		})
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		gvk := cfg.gvk
		cfg.prepare = func(o client.Object) { o.GetObjectKind().SetGroupVersionKind(gvk) }
		return newTypedEntry(cfg, func(set shard.Set) (listwatch.ListerWatcher[*metav1.PartialObjectMetadata], error) {
			return kube.Source[*metav1.PartialObjectMetadata](context.Background(), cfg.restConfig, cfg.anyResourceOptions(set))
		})
	}
	if e, ok, err := newViewEntry(cfg, obj); ok { // a view type (AddView)
		return e, err
	}
	if mk, ok := builtinEntries[cfg.gvk]; ok {
		return mk(cfg)
	}
	return newConvertedEntry(cfg, scheme)
}

// newConvertedEntry serves a Go type kinformer has no typed source for
// (typically a custom resource's) from a dynamic source, converting each
// object into a new object of that type before it is cached.
func newConvertedEntry(cfg entryConfig, scheme *runtime.Scheme) (entry, error) {
	if _, err := scheme.New(cfg.gvk); err != nil {
		return nil, err
	}
	gvk := cfg.gvk
	convert := func(u *unstructured.Unstructured) (client.Object, error) {
		o, err := scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, o); err != nil {
			return nil, fmt.Errorf("convert %s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err)
		}
		co, ok := o.(client.Object)
		if !ok {
			return nil, fmt.Errorf("%T is not a client.Object", o)
		}
		clearTypeMeta(co) // as controller-runtime's decoder leaves a Go-typed object
		return co, nil
	}
	return newTypedEntry(cfg, func(set shard.Set) (listwatch.ListerWatcher[client.Object], error) {
		src, err := kube.Source[*unstructured.Unstructured](context.Background(), cfg.restConfig, cfg.anyResourceOptions(set))
		if err != nil {
			return nil, err
		}
		return mapSource[*unstructured.Unstructured, client.Object]{src: src, convert: convert}, nil
	})
}

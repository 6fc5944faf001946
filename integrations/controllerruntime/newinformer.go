package controllerruntime

import (
	"context"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// newInformerFunc is cache.Options.NewInformer's type.
type newInformerFunc = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// informerEntry is an entry over a client-go SharedIndexInformer made by
// cache.Options.NewInformer: with it set, every informer of the cache is the
// one NewInformer returns, given a client-go ListerWatcher of the kind (the
// cache's namespace and selectors applied, bookmarks asked for), an empty
// object of the kind, the resync period and the namespace index, as
// controller-runtime gives them. kinformer's informers are then not used.
type informerEntry struct {
	sii toolscache.SharedIndexInformer
}

func newInformerEntry(cfg entryConfig, obj runtime.Object, scheme *runtime.Scheme, newInformer newInformerFunc) (entry, error) {
	lw, example, err := clientgoListerWatcher(cfg, obj, scheme)
	if err != nil {
		return nil, err
	}
	if _, ok := example.(*metav1.PartialObjectMetadata); ok {
		gvk := cfg.gvk // the metadata client's objects say PartialObjectMetadata
		cfg.prepare = func(o client.Object) { o.GetObjectKind().SetGroupVersionKind(gvk) }
	}
	sii := newInformer(lw, example, resyncPeriod(cfg.resync),
		toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	if sii == nil {
		return nil, fmt.Errorf("Options.NewInformer returned no informer for %s", cfg.gvk)
	}
	if cfg.prepare != nil || cfg.transform != nil {
		prepare, transform := cfg.prepare, cfg.transform
		err := sii.SetTransform(func(in any) (any, error) {
			if o, ok := in.(client.Object); ok && prepare != nil {
				prepare(o)
			}
			if transform != nil {
				return transform(in)
			}
			return in, nil
		})
		if err != nil {
			return nil, err
		}
	}
	if cfg.watchErr != nil {
		if err := sii.SetWatchErrorHandlerWithContext(cfg.watchErr); err != nil {
			return nil, err
		}
	}
	return &informerEntry{sii: sii}, nil
}

// clientgoListerWatcher returns a client-go ListerWatcher of obj's kind, and
// the empty object of the kind its informer is told of: typed objects decoded
// as controller-runtime decodes them (apiVersion and kind left empty),
// unstructured objects from the dynamic client, metadata-only objects from
// the metadata client with their kind set (by the entry's prepare).
func clientgoListerWatcher(cfg entryConfig, obj runtime.Object, scheme *runtime.Scheme) (toolscache.ListerWatcher, runtime.Object, error) {
	namespaced := cfg.mapping.Scope.Name() == apimeta.RESTScopeNameNamespace
	ns := ""
	if namespaced {
		ns = cfg.namespace
	}
	selected := func(opts metav1.ListOptions) metav1.ListOptions {
		if cfg.label != "" {
			opts.LabelSelector = cfg.label
		}
		if cfg.field != "" {
			opts.FieldSelector = cfg.field
		}
		return opts
	}
	watched := func(opts metav1.ListOptions) metav1.ListOptions {
		opts = selected(opts)
		opts.Watch = true
		opts.AllowWatchBookmarks = true
		return opts
	}
	switch obj.(type) {
	case runtime.Unstructured:
		dc, err := dynamic.NewForConfigAndClient(cfg.restConfig, cfg.httpClient)
		if err != nil {
			return nil, nil, err
		}
		var r dynamic.ResourceInterface = dc.Resource(cfg.mapping.Resource)
		if ns != "" {
			r = dc.Resource(cfg.mapping.Resource).Namespace(ns)
		}
		example := &unstructured.Unstructured{}
		example.SetGroupVersionKind(cfg.gvk)
		return &toolscache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				return r.List(ctx, selected(opts))
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				return r.Watch(ctx, watched(opts))
			},
		}, example, nil
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		mcfg := rest.CopyConfig(cfg.restConfig)
		mcfg.NegotiatedSerializer = nil // the metadata client's own
		mc, err := metadata.NewForConfigAndClient(mcfg, cfg.httpClient)
		if err != nil {
			return nil, nil, err
		}
		var r metadata.ResourceInterface = mc.Resource(cfg.mapping.Resource)
		if ns != "" {
			r = mc.Resource(cfg.mapping.Resource).Namespace(ns)
		}
		example := &metav1.PartialObjectMetadata{}
		example.SetGroupVersionKind(cfg.gvk)
		return &toolscache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				return r.List(ctx, selected(opts))
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				return r.Watch(ctx, watched(opts))
			},
		}, example, nil
	}
	example, err := scheme.New(cfg.gvk)
	if err != nil {
		return nil, nil, err
	}
	listGVK := cfg.gvk.GroupVersion().WithKind(cfg.gvk.Kind + "List")
	listObj, err := scheme.New(listGVK)
	if err != nil {
		return nil, nil, err
	}
	rc, err := apiutil.RESTClientForGVK(cfg.gvk, false, false, cfg.restConfig, serializer.NewCodecFactory(scheme), cfg.httpClient)
	if err != nil {
		return nil, nil, err
	}
	params := runtime.NewParameterCodec(scheme)
	request := func(opts metav1.ListOptions) *rest.Request {
		return rc.Get().NamespaceIfScoped(ns, ns != "").Resource(cfg.mapping.Resource.Resource).VersionedParams(&opts, params)
	}
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			out := listObj.DeepCopyObject()
			if err := request(selected(opts)).Do(ctx).Into(out); err != nil {
				return nil, err
			}
			return out, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return request(watched(opts)).Watch(ctx)
		},
	}, example, nil
}

func (e *informerEntry) informer() crcache.Informer { return e.sii }
func (e *informerEntry) run(ctx context.Context)    { e.sii.RunWithContext(ctx) }
func (e *informerEntry) hasSynced() bool            { return e.sii.HasSynced() }

func (e *informerEntry) waitSynced(ctx context.Context) bool {
	return toolscache.WaitForCacheSync(ctx.Done(), e.sii.HasSynced)
}

func (e *informerEntry) get(namespace, name string) (client.Object, bool) {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, ok, err := e.sii.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return nil, false
	}
	co, ok := obj.(client.Object)
	return co, ok
}

func (e *informerEntry) list(namespace string) []client.Object {
	idx := e.sii.GetIndexer()
	var objs []any
	if namespace == "" {
		objs = idx.List()
	} else if byNS, err := idx.ByIndex(toolscache.NamespaceIndex, namespace); err == nil {
		objs = byNS
	} else { // an informer that dropped the namespace index
		for _, o := range idx.List() {
			if co, ok := o.(client.Object); ok && co.GetNamespace() == namespace {
				objs = append(objs, o)
			}
		}
	}
	return objects(objs)
}

func (e *informerEntry) byIndex(index, value string) ([]client.Object, error) {
	objs, err := e.sii.GetIndexer().ByIndex(index, value)
	if err != nil {
		return nil, fmt.Errorf("index with name %s does not exist", index)
	}
	return objects(objs), nil
}

func (e *informerEntry) indexed(index, value string, obj client.Object) (bool, error) {
	f, ok := e.sii.GetIndexer().GetIndexers()[index]
	if !ok {
		return false, fmt.Errorf("index with name %s does not exist", index)
	}
	vals, err := f(obj)
	if err != nil {
		return false, err
	}
	for _, v := range vals {
		if v == value {
			return true, nil
		}
	}
	return false, nil
}

// objects keeps the client.Objects of objs (a client-go cache holds nothing
// else for the kinds a controller-runtime cache serves).
func objects(objs []any) []client.Object {
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		if co, ok := o.(client.Object); ok {
			out = append(out, co)
		}
	}
	return out
}

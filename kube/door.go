package kube

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
)

// This file is the package's one door: Informer, Acquire and Source serve
// every Go type the same way; kindOf (kind.go) tells from the type, and the
// options' Resource, where its objects come from.

// Informer returns the factory's informer of T and the Key it is known by
// (the one Factory.WaitForCacheSync answers by), creating it on first use:
// one per Key per factory, whoever asks. T says where its objects come
// from:
//
//   - a built-in type (a pointer to a type of k8s.io/api that can be
//     listed, such as *corev1.Pod or *appsv1.Deployment): its own
//     resource, protobuf on the wire, strings interned;
//   - *unstructured.Unstructured: the resource opts.Resource names (custom
//     resources included), over JSON;
//   - *metav1.PartialObjectMetadata: the resource opts.Resource names,
//     reduced by the server to metadata;
//   - a pointer to a struct embedding ViewOf[F]: a projected view of the
//     built-in type F;
//   - a pointer to another struct (embedding ViewMeta), with opts.Resource
//     naming a custom resource: a projected view of it, checked against
//     its CustomResourceDefinition's schema.
//
// Any other type is an error naming it and saying what to use instead. An informer created after Start runs from
// the next Start; it lives until Shutdown (see Acquire for one that can be
// released).
//
// Read its cache through inf.Cache(), or a lister: informer.NewLister(
// inf.Cache()). Objects it hands out are shared with the cache and every
// other reader: they must not be mutated.
//
// A T that cannot be served, a missing or mismatched opts.Resource, a
// selector that does not parse, or a view that does not fit its resource
// (ErrInvalidView) is an error naming it, before any request; after
// Shutdown the error wraps ErrShutdown. For a view of a custom resource,
// every call reads its schema (one GET, bounded by ctx), even when the
// informer exists already: keep the informer rather than asking for it on
// every reconcile. On error the Key is the zero Key.
func Informer[T cache.Object](ctx context.Context, f *Factory, opts InformerOptions[T]) (*informer.Shared[T], Key, error) {
	k, err := factoryKind[T](ctx, f, opts)
	if err != nil {
		return nil, Key{}, err
	}
	inf, key, err := informerFor(f, k, opts, pinLocked)
	if err != nil {
		return nil, Key{}, err
	}
	return inf, key, nil
}

// Acquire is Informer with a reference count: it returns a new Ref to the
// factory's informer of T, creating it on first use, and starts it at once
// when the factory has been started. The last Ref released stops that
// informer and drops it from the factory (see Ref); release each Ref when
// done with it.
func Acquire[T cache.Object](ctx context.Context, f *Factory, opts InformerOptions[T]) (*Ref[T], error) {
	k, err := factoryKind[T](ctx, f, opts)
	if err != nil {
		return nil, err
	}
	return acquire(f, k, opts)
}

// factoryKind is kindOf for an informer of f.
func factoryKind[T cache.Object](ctx context.Context, f *Factory, opts InformerOptions[T]) (kind[T], error) {
	if f.isShutdown() { // before a view of a custom resource asks for its schema
		return kind[T]{}, fmt.Errorf("kube: informer of %s: %w", typeName[T](), ErrShutdown)
	}
	return kindOf[T](ctx, f.cfg, opts.Resource, "InformerOptions.Resource", f.httpClient)
}

// Source returns a source of T for those who build a reflector or an
// informer by hand (listwatch.ListerWatcher[T]); T and opts.Resource say
// where its objects come from, as for Informer (a non-empty namespace of a
// type that serves any resource means the resource is namespaced). Lists and watches of
// built-in types ask for protobuf and accept JSON, and their objects come
// with TypeMeta filled in, each listed item its own allocation; see
// SourceOptions for interning and shared parts.
//
// cfg is copied; with QPS and Burst both zero the source allows 50
// requests a second, bursts of 100 (watches are not limited). A view of a
// custom resource reads its schema here (ctx bounds that read); no other
// kind makes a request before List or Watch. The source is safe for
// concurrent use, and never retries: back-off belongs to the reflector.
func Source[T cache.Object](ctx context.Context, cfg *rest.Config, opts SourceOptions) (listwatch.ListerWatcher[T], error) {
	if cfg == nil {
		return nil, fmt.Errorf("kube: Source: nil rest.Config")
	}
	k, err := kindOf[T](ctx, cfg, opts.Resource, "SourceOptions.Resource", opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	b, err := k.newSource(cfg, opts.internal())
	if err != nil {
		return nil, err
	}
	return b.src, nil
}

package kube

import (
	"reflect"

	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
)

// Typed returns a source of the built-in resource served as Go type T, a
// pointer to a type of k8s.io/api (for example *corev1.Pod or
// *appsv1.Deployment). The resource, its group, version and scope are
// resolved from T; an unknown or unlistable T is an error naming it.
//
// Lists and watches ask for protobuf and accept JSON. Objects come with
// TypeMeta (apiVersion and kind) filled in. Each listed item is its own
// allocation, decoded straight from the response. Unless
// opts.DisableInterning is set, decoded objects share their repeated
// strings (label keys and values, images, ...), which no mutation can
// affect; with opts.ShareMutableParts they also share mutable parts
// (containers, volumes, managedFields, resource lists, ...), and must then
// not be mutated in place (deep-copy first).
//
// cfg is copied; with QPS and Burst both zero the source uses DefaultQPS
// and DefaultBurst. The source is safe for concurrent use.
func Typed[T cache.Object](cfg *rest.Config, opts SourceOptions) (listwatch.ListerWatcher[T], error) {
	b, err := resolveBuiltin(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	c, err := structCodec[T](b, acceptTyped, acceptTyped, false)
	if err != nil {
		return nil, err
	}
	internCodec(c, opts)
	return newSource(cfg, b.gvk.GroupVersion().WithResource(b.resource), b.namespaced, opts, c)
}

// ResourceFor returns the resource Typed[T] would serve, without any server.
func ResourceFor[T cache.Object]() (Resource, error) {
	b, err := resolveBuiltin(reflect.TypeFor[T]())
	if err != nil {
		return Resource{}, err
	}
	return Resource{
		GVR:        b.gvk.GroupVersion().WithResource(b.resource),
		Kind:       b.gvk.Kind,
		Namespaced: b.namespaced,
	}, nil
}

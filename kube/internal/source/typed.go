package source

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
)

// Resource is a resource as kube.Resource names it (the kube package
// converts between the two).
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// Typed returns a source of the built-in resource served as Go type T, a
// pointer to a type of k8s.io/api: protobuf lists and watches, JSON
// accepted, objects with TypeMeta filled in and, unless
// opts.DisableInterning, their strings interned (with
// opts.ShareMutableParts, their mutable parts shared). An unknown or
// unlistable T is an error naming it. cfg is copied.
func Typed[T cache.Object](cfg *rest.Config, opts Options) (*Source[T], error) {
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

// BuiltinResource returns the resource a built-in Go type t (a pointer to
// a type of k8s.io/api) is served as, without any server, or an error
// naming t.
func BuiltinResource(t reflect.Type) (Resource, error) {
	b, err := resolveBuiltin(t)
	if err != nil {
		return Resource{}, err
	}
	return Resource{
		GVR:        b.gvk.GroupVersion().WithResource(b.resource),
		Kind:       b.gvk.Kind,
		Namespaced: b.namespaced,
	}, nil
}

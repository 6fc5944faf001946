package source

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
)

// Dynamic returns a source of the objects of any resource (custom resources
// included) as *unstructured.Unstructured, over JSON. Every object must
// carry the apiVersion of gvr; one that does not comes out of Watch.Next as
// a *listwatch.DecodeError (errors.Is(err, listwatch.ErrWrongType)), and the
// stream goes on.
//
// A non-empty opts.Namespace means gvr is namespaced. cfg is copied. T
// must be *unstructured.Unstructured (another type is an error): the
// caller, generic in T, gets the source it asked for as it is.
func Dynamic[T cache.Object](cfg *rest.Config, gvr schema.GroupVersionResource, opts Options) (*Source[T], error) {
	if t := reflect.TypeFor[T](); t != reflect.TypeFor[*unstructured.Unstructured]() {
		return nil, fmt.Errorf("kube: a dynamic source serves *unstructured.Unstructured, not %v", t)
	}
	return newSource(cfg, gvr, true, opts, unstructuredCodec[T](gvr.GroupVersion().String()))
}

// unstructuredCodec is the codec of Dynamic; T is *unstructured.Unstructured
// (each object made here is handed out as T).
func unstructuredCodec[T cache.Object](apiVersion string) *codec[T] {
	c := &codec[T]{
		listAccept:  acceptJSON,
		watchAccept: acceptJSON,
		apiVersion:  apiVersion,
	}
	c.jsonObject = func(data []byte) (T, error) {
		var zero T
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return zero, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if u.GetAPIVersion() != apiVersion {
			return zero, &listwatch.DecodeError{Got: u.GetAPIVersion() + " " + u.GetKind(), Err: fmt.Errorf("want apiVersion %s", apiVersion)}
		}
		return any(u).(T), nil
	}
	c.list = func(body []byte, proto bool) (listwatch.Page[T], error) {
		var page listwatch.Page[T]
		if proto {
			return page, fmt.Errorf("%w: protobuf list for a JSON-only source", ErrMalformed)
		}
		list := &unstructured.UnstructuredList{}
		if err := list.UnmarshalJSON(body); err != nil {
			return page, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if list.GetAPIVersion() != apiVersion {
			return page, &listwatch.DecodeError{Got: list.GetAPIVersion() + " " + list.GetKind(), Err: fmt.Errorf("want apiVersion %s", apiVersion)}
		}
		page.Items = make([]T, len(list.Items))
		for i := range list.Items {
			page.Items[i] = any(&list.Items[i]).(T)
		}
		page.ResourceVersion = list.GetResourceVersion()
		page.Continue = list.GetContinue()
		page.RemainingItemCount = list.GetRemainingItemCount()
		return page, nil
	}
	return c
}

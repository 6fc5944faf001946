package source

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/listwatch"
)

// Dynamic returns a source of the objects of any resource (custom resources
// included) as *unstructured.Unstructured, over JSON. Every object must
// carry the apiVersion of gvr; one that does not comes out of Watch.Next as
// a *listwatch.DecodeError (errors.Is(err, listwatch.ErrWrongType)), and the
// stream goes on.
//
// A non-empty opts.Namespace means gvr is namespaced. cfg is copied.
func Dynamic(cfg *rest.Config, gvr schema.GroupVersionResource, opts Options) (*Source[*unstructured.Unstructured], error) {
	return newSource(cfg, gvr, true, opts, unstructuredCodec(gvr.GroupVersion().String()))
}

func unstructuredCodec(apiVersion string) *codec[*unstructured.Unstructured] {
	c := &codec[*unstructured.Unstructured]{
		listAccept:  acceptJSON,
		watchAccept: acceptJSON,
		apiVersion:  apiVersion,
	}
	c.jsonObject = func(data []byte) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if u.GetAPIVersion() != apiVersion {
			return nil, &listwatch.DecodeError{Got: u.GetAPIVersion() + " " + u.GetKind(), Err: fmt.Errorf("want apiVersion %s", apiVersion)}
		}
		return u, nil
	}
	c.list = func(body []byte, proto bool) (listwatch.Page[*unstructured.Unstructured], error) {
		var page listwatch.Page[*unstructured.Unstructured]
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
		page.Items = make([]*unstructured.Unstructured, len(list.Items))
		for i := range list.Items {
			page.Items[i] = &list.Items[i]
		}
		page.ResourceVersion = list.GetResourceVersion()
		page.Continue = list.GetContinue()
		page.RemainingItemCount = list.GetRemainingItemCount()
		return page, nil
	}
	return c
}

package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/kube/internal/source"
)

// kind is how objects of a Go type T come from the server: the resource
// they are served from and how to make a source of them for one
// selection. kindOf finds it from T and the options; the one door
// (Informer, Acquire, Source) asks nothing else, so a new kind of source
// is a new case in kindOf and no new function.
type kind[T cache.Object] struct {
	res Resource
	// newSource makes the source for one selection; cfg is copied. For a
	// type that serves any resource, a non-empty namespace means the
	// resource is namespaced (see Selection.Namespace; a factory clears
	// it for a cluster-scoped resource before).
	newSource func(cfg *rest.Config, opts source.Options) (built[T], error)
}

// built is a source and, for views, how a checkpoint keeps its objects
// (zero: as checkpointFor encodes objects of their own types).
type built[T cache.Object] struct {
	src   *source.Source[T]
	codec source.ObjectCodec[T]
}

// plain is the built of a source whose objects a checkpoint encodes by
// their own type.
func plain[T cache.Object](s *source.Source[T], err error) (built[T], error) {
	return built[T]{src: s}, err
}

// kindOf returns the kind of T given the resource the options name (zero
// when they name none). option names that field in errors
// ("InformerOptions.Resource"). ctx and hc bound and carry the one request
// a view of a custom resource makes here, to read its schema.
func kindOf[T cache.Object](ctx context.Context, cfg *rest.Config, res Resource, option string, hc *http.Client) (kind[T], error) {
	t := reflect.TypeFor[T]()
	named := res.GVR.Resource != ""
	if named && res.GVR.Version == "" {
		return kind[T]{}, fmt.Errorf("kube: %s %q has no version", option, res.GVR.String())
	}
	switch {
	case t == reflect.TypeFor[*unstructured.Unstructured]():
		if !named {
			return kind[T]{}, needResource(t, option, "serves any resource")
		}
		return kind[T]{res: res, newSource: func(cfg *rest.Config, opts source.Options) (built[T], error) {
			return plain(source.Dynamic[T](cfg, res.GVR, opts))
		}}, nil

	case t == reflect.TypeFor[*metav1.PartialObjectMetadata]():
		if !named {
			return kind[T]{}, needResource(t, option, "serves any resource")
		}
		return kind[T]{res: res, newSource: func(cfg *rest.Config, opts source.Options) (built[T], error) {
			return plain(source.Metadata[T](cfg, res.GVR, opts))
		}}, nil
	}

	if full, ok := viewedType[T](); ok { // a view of built-in type full
		own, err := source.BuiltinResource(full)
		if err != nil {
			return kind[T]{}, fmt.Errorf("%w: ViewOf in %v needs a built-in type (a view of a custom resource embeds kube.ViewMeta and names its resource in %s)", err, t, option)
		}
		if err := sameResource(t, own, res, option); err != nil {
			return kind[T]{}, err
		}
		if err := source.CheckView[T](full); err != nil {
			return kind[T]{}, err
		}
		return kind[T]{res: Resource(own), newSource: func(cfg *rest.Config, opts source.Options) (built[T], error) {
			s, codec, err := source.View[T](cfg, full, opts)
			return built[T]{src: s, codec: codec}, err
		}}, nil
	}

	if isBuiltinType(t) || !named {
		own, err := source.BuiltinResource(t)
		switch {
		case err != nil && isBuiltinType(t):
			return kind[T]{}, err
		case err != nil:
			return kind[T]{}, fmt.Errorf("kube: %v is not a type kube serves by itself: use a built-in type (*corev1.Pod), "+
				"a view of one (a struct embedding kube.ViewOf[*corev1.Pod]), or, with %s set to the resource, "+
				"*unstructured.Unstructured, *metav1.PartialObjectMetadata or a view of a custom resource (a struct embedding kube.ViewMeta)",
				t, option)
		}
		if err := sameResource(t, own, res, option); err != nil {
			return kind[T]{}, err
		}
		return kind[T]{res: Resource(own), newSource: func(cfg *rest.Config, opts source.Options) (built[T], error) {
			return plain(source.Typed[T](cfg, opts))
		}}, nil
	}

	// A view of the custom resource res, checked against its schema.
	plan, err := source.CompileCRDView[T](ctx, cfg, source.Resource(res), hc)
	if err != nil {
		return kind[T]{}, err
	}
	return kind[T]{res: res, newSource: func(cfg *rest.Config, opts source.Options) (built[T], error) {
		r := source.Resource(res)
		r.Namespaced = r.Namespaced || opts.Namespace != ""
		s, err := source.CRDView[T](cfg, r, plan, opts)
		return built[T]{src: s, codec: source.ObjectCodec[T]{Err: errCRDViewCheckpoint}}, err
	}}, nil
}

// errCRDViewCheckpoint: a view of a custom resource is decoded from JSON
// only, and a checkpoint keeps views as protobuf.
var errCRDViewCheckpoint = errors.New("checkpoints are not available for views of custom resources (they are decoded from JSON)")

// isBuiltinType reports whether t is a pointer to a type of k8s.io/api.
func isBuiltinType(t reflect.Type) bool {
	return t.Kind() == reflect.Pointer && strings.HasPrefix(t.Elem().PkgPath(), "k8s.io/api/")
}

func needResource(t reflect.Type, option, why string) error {
	return fmt.Errorf("kube: %v %s: set %s to the one to serve (Resolve gives it from a name)", t, why, option)
}

// sameResource checks that the resource the options name, if any, is own,
// the one T is served from.
func sameResource(t reflect.Type, own source.Resource, res Resource, option string) error {
	if res.GVR.Resource == "" || res.GVR == own.GVR {
		return nil
	}
	return fmt.Errorf("kube: %v is served from %s, but %s names %s", t, resourceName(own.GVR), option, resourceName(res.GVR))
}

// resourceFor returns the resource the built-in type T is served from,
// without any server.
func resourceFor[T cache.Object]() (Resource, error) {
	r, err := source.BuiltinResource(reflect.TypeFor[T]())
	return Resource(r), err
}

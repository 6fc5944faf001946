package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/project"
	"github.com/kinformer/kinformer/listwatch"
)

// ErrNoSchema means a dynamic view's resource has no schema to check the
// view against: it is not a custom resource (built-in types take View),
// or its CustomResourceDefinition does not serve the version asked for.
var ErrNoSchema = errors.New("no custom resource schema")

// DynamicView returns a source of views T of the custom resource res (as
// Resolve gives it), decoded from JSON straight into T: the same view
// declarations as View (a pointer to a struct whose kube tags are paths,
// by JSON names, in the custom resource; embed ViewMeta for the metadata),
// with every field T does not declare skipped, never allocated.
//
// T is checked against the structural schema the resource's
// CustomResourceDefinition publishes for res's version, read here once
// (ctx bounds that read): a path the schema does not have, or whose type
// T's field cannot hold, is an error wrapping ErrInvalidView; below a
// field marked x-kubernetes-preserve-unknown-fields any path is accepted
// and decoded if present. A resource with no CustomResourceDefinition, or
// a version it does not serve, is an error wrapping ErrNoSchema; a failed
// read is the server's error (listwatch.ErrUnavailable when it cannot be
// reached; the apiserver's status, such as Forbidden, otherwise). A schema
// changed later (a new CRD version) is not seen by a running source.
//
// cfg is copied. The source is safe for concurrent use.
func DynamicView[T cache.Object](ctx context.Context, cfg *rest.Config, res Resource, opts SourceOptions) (listwatch.ListerWatcher[T], error) {
	plan, err := compileDynamicView[T](ctx, cfg, res, opts)
	if err != nil {
		return nil, err
	}
	return dynamicViewSource[T](cfg, res, plan, opts)
}

// dynamicViewSource is the source of views T of res, read with plan.
func dynamicViewSource[T cache.Object](cfg *rest.Config, res Resource, plan *project.Plan, opts SourceOptions) (listwatch.ListerWatcher[T], error) {
	if err := viewShardable[T](opts.Shard); err != nil {
		return nil, err
	}
	c := viewCodec[T](plan, builtin{}, res.GVR.GroupVersion().String(), res.Kind, false, viewStrings(opts))
	return newSource(cfg, res.GVR, res.Namespaced, opts, c)
}

// compileDynamicView reads res's schema and compiles the plan reading it
// into T.
func compileDynamicView[T cache.Object](ctx context.Context, cfg *rest.Config, res Resource, opts SourceOptions) (*project.Plan, error) {
	if err := viewType[T](); err != nil {
		return nil, err
	}
	s, err := crdSchema(ctx, cfg, res.GVR, opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	plan, err := project.CompileSchema(reflect.TypeFor[T](), s, res.GVR.Resource+"."+res.GVR.Group+"/"+res.GVR.Version)
	if err != nil {
		return nil, fmt.Errorf("kube: %w: %w", ErrInvalidView, err)
	}
	return plan, nil
}

// crdDocument is the part of a CustomResourceDefinition a dynamic view
// needs.
type crdDocument struct {
	Spec struct {
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
			Schema *struct {
				OpenAPIV3Schema *project.Schema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

var crdsGV = schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}

// crdSchema reads the openAPIV3Schema of gvr's version from its
// CustomResourceDefinition.
func crdSchema(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, hc *http.Client) (*project.Schema, error) {
	if cfg == nil {
		return nil, errors.New("kube: nil rest.Config")
	}
	name := gvr.Resource + "." + gvr.Group
	if gvr.Group == "" {
		return nil, fmt.Errorf("kube: dynamic view of %s: %w: core resources are built-in types (use View)", gvr.Resource, ErrNoSchema)
	}
	rc := rest.CopyConfig(cfg)
	rc.GroupVersion = &crdsGV
	rc.APIPath = "/apis"
	rc.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc.AcceptContentTypes = acceptJSON
	if hc == nil {
		var err error
		if hc, err = rest.HTTPClientFor(rc); err != nil {
			return nil, fmt.Errorf("kube: dynamic view of %s: HTTP client: %w", gvr.String(), err)
		}
	}
	client, err := rest.RESTClientForConfigAndClient(rc, hc)
	if err != nil {
		return nil, fmt.Errorf("kube: dynamic view of %s: client: %w", gvr.String(), err)
	}
	body, err := client.Get().Resource("customresourcedefinitions").Name(name).DoRaw(ctx)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("kube: dynamic view of %s: %w: no CustomResourceDefinition %s (built-in types use View)", gvr.String(), ErrNoSchema, name)
	case err != nil:
		return nil, fmt.Errorf("kube: dynamic view of %s: reading its CustomResourceDefinition: %w", gvr.String(), mapError(err))
	}
	var doc crdDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("kube: dynamic view of %s: %w: CustomResourceDefinition %s: %w", gvr.String(), ErrMalformed, name, err)
	}
	for _, v := range doc.Spec.Versions {
		if v.Name != gvr.Version {
			continue
		}
		if !v.Served {
			return nil, fmt.Errorf("kube: dynamic view of %s: %w: version %s is not served", gvr.String(), ErrNoSchema, v.Name)
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("kube: dynamic view of %s: %w: version %s has no openAPIV3Schema", gvr.String(), ErrNoSchema, v.Name)
		}
		return v.Schema.OpenAPIV3Schema, nil
	}
	return nil, fmt.Errorf("kube: dynamic view of %s: %w: CustomResourceDefinition %s has no version %s", gvr.String(), ErrNoSchema, name, gvr.Version)
}

// DynamicViewInformer returns the factory's informer of views T of the
// custom resource res (see DynamicView), creating it on first use; ctx
// bounds the read of the resource's schema then. Its Key has Source
// SourceDynamicView and the view's type in View. Checkpoints are not
// available for views. Every call reads the schema (one GET), also when
// the informer exists already: keep the informer it returns instead of
// asking for it on every reconcile.
func DynamicViewInformer[T cache.Object](ctx context.Context, f *Factory, res Resource, opts InformerOptions[T]) (*informer.Shared[T], error) {
	id, src, err := dynamicViewKey[T](ctx, f, res, opts)
	if err != nil {
		return nil, err
	}
	return pinned(informerForKey(f, id, opts, src, pinLocked))
}

// AcquireDynamicView is DynamicViewInformer with a reference count (see
// Acquire and Ref).
func AcquireDynamicView[T cache.Object](ctx context.Context, f *Factory, res Resource, opts InformerOptions[T]) (*Ref[T], error) {
	id, src, err := dynamicViewKey[T](ctx, f, res, opts)
	if err != nil {
		return nil, err
	}
	return acquireKey(f, id, opts, src)
}

func dynamicViewKey[T cache.Object](ctx context.Context, f *Factory, res Resource, opts InformerOptions[T]) (Key, sourceFunc[T], error) {
	id := Key{Source: SourceDynamicView, Resource: res, View: viewName[T]()}
	if opts.Checkpoint {
		return id, nil, fmt.Errorf("kube: informer %s: checkpoints are not available for views", id)
	}
	plan, err := compileDynamicView[T](ctx, f.cfg, res, SourceOptions{})
	if err != nil {
		return id, nil, err
	}
	return id, func(so SourceOptions) (listwatch.ListerWatcher[T], error) {
		return dynamicViewSource[T](f.cfg, res, plan, so)
	}, nil
}

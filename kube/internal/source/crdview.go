package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/listquery"
	"github.com/kinformer/kinformer/internal/metacodec"
	"github.com/kinformer/kinformer/internal/project"
)

// ErrNoSchema means a custom resource view's resource has no schema to
// check the view against (kube.ErrNoSchema is this error).
var ErrNoSchema = errors.New("no custom resource schema")

// CRDView returns a source of views T of the custom resource res, decoded
// from JSON straight into T with plan (from CompileCRDView). res.Namespaced
// says whether opts.Namespace applies. cfg is copied.
func CRDView[T cache.Object](cfg *rest.Config, res Resource, plan *project.Plan, opts Options) (*Source[T], error) {
	if err := viewShardable[T](opts.Shard); err != nil {
		return nil, err
	}
	c := viewCodec[T](plan, builtin{}, res.GVR.GroupVersion().String(), res.Kind, false, viewStrings(opts))
	return newSource(cfg, res.GVR, res.Namespaced, opts, c)
}

// CompileCRDView reads the structural schema res's CustomResourceDefinition
// publishes for res's version (one GET, through hc when not nil; ctx bounds
// it) and compiles the plan reading it into T: a path the schema does not
// have, or whose type T's field cannot hold, is an error wrapping
// ErrInvalidView; below a field marked x-kubernetes-preserve-unknown-fields
// any path is accepted. No CustomResourceDefinition, or a version it does
// not serve, is an error wrapping ErrNoSchema; a failed read is the
// server's error, mapped as MapError maps it.
func CompileCRDView[T cache.Object](ctx context.Context, cfg *rest.Config, res Resource, hc *http.Client) (*project.Plan, error) {
	if err := viewType[T](); err != nil {
		return nil, err
	}
	s, err := crdSchema(ctx, cfg, res.GVR, hc)
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
		return nil, fmt.Errorf("kube: view of custom resource %s: %w: core resources are built-in types (embed kube.ViewOf[F] for a view of built-in type F)", gvr.Resource, ErrNoSchema)
	}
	rc := rest.CopyConfig(cfg)
	rc.GroupVersion = &crdsGV
	rc.APIPath = "/apis"
	rc.NegotiatedSerializer = metacodec.Serializer
	rc.AcceptContentTypes = acceptJSON
	if hc == nil {
		var err error
		if hc, err = rest.HTTPClientFor(rc); err != nil {
			return nil, fmt.Errorf("kube: view of custom resource %s: HTTP client: %w", gvr.String(), err)
		}
	}
	client, err := rest.RESTClientForConfigAndClient(rc, hc)
	if err != nil {
		return nil, fmt.Errorf("kube: view of custom resource %s: client: %w", gvr.String(), err)
	}
	body, err := client.Get().Resource("customresourcedefinitions").Name(name).DoRaw(ctx)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("kube: view of custom resource %s: %w: no CustomResourceDefinition %s (a view of a built-in type F embeds kube.ViewOf[F])", gvr.String(), ErrNoSchema, name)
	case err != nil:
		return nil, fmt.Errorf("kube: view of custom resource %s: reading its CustomResourceDefinition: %w", gvr.String(), listquery.MapError(err))
	}
	var doc crdDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("kube: view of custom resource %s: %w: CustomResourceDefinition %s: %w", gvr.String(), ErrMalformed, name, err)
	}
	for _, v := range doc.Spec.Versions {
		if v.Name != gvr.Version {
			continue
		}
		if !v.Served {
			return nil, fmt.Errorf("kube: view of custom resource %s: %w: version %s is not served", gvr.String(), ErrNoSchema, v.Name)
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("kube: view of custom resource %s: %w: version %s has no openAPIV3Schema", gvr.String(), ErrNoSchema, v.Name)
		}
		return v.Schema.OpenAPIV3Schema, nil
	}
	return nil, fmt.Errorf("kube: view of custom resource %s: %w: CustomResourceDefinition %s has no version %s", gvr.String(), ErrNoSchema, name, gvr.Version)
}

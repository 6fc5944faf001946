package kube

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/internal/discover"
	"github.com/kinformer/kinformer/internal/listquery"
)

// Resource names one resource of a cluster, and whether a namespace
// applies to it: what InformerOptions.Resource and SourceOptions.Resource
// take for the types that serve any resource, typically from Resolve.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// Resolve maps what a user types to a resource, through the server's
// discovery: a plural ("pods"), singular ("pod"), kind ("Pod"), short name
// ("po", "deploy"), or any of those qualified by group or version and group
// ("deployments.apps", "deployments.v1.apps", "widgets.example.com"), custom
// resources included. When a name matches in several groups, the server's
// preferred one wins, as in kubectl. An unknown name is an error wrapping
// meta's NoResourceMatchError.
//
// Each call reads discovery afresh; callers resolving many names should
// keep the results.
func Resolve(ctx context.Context, cfg *rest.Config, name string) (Resource, error) {
	arg := strings.ToLower(strings.TrimSpace(name))
	if arg == "" {
		return Resource{}, fmt.Errorf("kube: empty resource name")
	}
	full, partial := schema.ParseResourceArg(arg)
	if partial.Resource == "" { // ".apps": no server has it, and the mapper fails another way
		return Resource{}, fmt.Errorf("kube: resource %q: %w", name, &meta.NoResourceMatchError{PartialResource: partial.WithVersion("")})
	}
	if cfg == nil {
		return Resource{}, fmt.Errorf("kube: discovery client: nil rest.Config")
	}
	client, err := discover.Client(cfg)
	if err != nil {
		return Resource{}, fmt.Errorf("kube: discovery client: %w", err)
	}
	defer client.Client.CloseIdleConnections()
	doc, err := discover.Read(ctx, client)
	if doc == nil {
		return Resource{}, fmt.Errorf("kube: discovery: %w", listquery.MapError(err))
	}
	// Partial discovery failures (one broken aggregated API) still leave
	// the other groups usable.
	mapper := shortNames{doc.Mapper(), doc}

	var gvr schema.GroupVersionResource
	found := false
	if full != nil {
		if r, err := mapper.ResourceForWithContext(ctx, *full); err == nil {
			gvr, found = r, true
		}
	}
	if !found {
		gvr, err = mapper.ResourceForWithContext(ctx, partial.WithVersion(""))
		if err != nil {
			return Resource{}, fmt.Errorf("kube: resource %q: %w", name, err)
		}
	}
	gvk, err := mapper.KindForWithContext(ctx, gvr)
	if err != nil {
		return Resource{}, fmt.Errorf("kube: kind of %q: %w", name, err)
	}
	mapping, err := mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	if err != nil {
		return Resource{}, fmt.Errorf("kube: scope of %q: %w", name, err)
	}
	return Resource{
		GVR:        gvr,
		Kind:       gvk.Kind,
		Namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace,
	}, nil
}

// shortNames is a mapper that first expands a short name ("po") to its
// resource (discover.Document.Expand), as kubectl does.
type shortNames struct {
	meta.RESTMapperWithContext
	doc *discover.Document
}

func (m shortNames) ResourceForWithContext(ctx context.Context, r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return m.RESTMapperWithContext.ResourceForWithContext(ctx, m.doc.Expand(r))
}

func (m shortNames) KindForWithContext(ctx context.Context, r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return m.RESTMapperWithContext.KindForWithContext(ctx, m.doc.Expand(r))
}

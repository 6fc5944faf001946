package kubetest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/kinformer/kinformer/kube/internal/source"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes/scheme"
)

// CustomResource is a resource the server serves beyond client-go's scheme,
// as a CustomResourceDefinition would: as JSON, stored as
// *unstructured.Unstructured, with no schema (any JSON object of its kind
// is accepted).
type CustomResource struct {
	// GVR names the resource, for example example.com/v1, widgets.
	GVR schema.GroupVersionResource
	// Kind is the kind of its objects, for example Widget; the list kind
	// is Kind+"List".
	Kind string
	// Namespaced says whether its objects live in namespaces.
	Namespaced bool
	// ShortNames are published in discovery (kube.Resolve and kubectl
	// accept them as names of the resource).
	ShortNames []string
}

// resource is one resource the server serves. It is immutable.
type resource struct {
	gvr        schema.GroupVersionResource
	gvk        schema.GroupVersionKind
	namespaced bool
	shortNames []string
	// builtin: a kind of client-go's scheme, stored as its Go type and
	// served as protobuf too; otherwise stored as *unstructured.Unstructured
	// and served as JSON only.
	builtin bool
	// fields are the field labels a field selector may name besides
	// metadata.name and metadata.namespace.
	fields []string
	// path prefixes the keys of the resource's objects in the store.
	path string
}

// new returns an empty object of the resource's kind.
func (r *resource) new() runtime.Object {
	if r.builtin {
		obj, err := scheme.Scheme.New(r.gvk)
		if err != nil {
			panic(fmt.Sprintf("kubetest: %v left the scheme: %v", r.gvk, err)) // checked by newRegistry
		}
		obj.GetObjectKind().SetGroupVersionKind(r.gvk)
		return obj
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(r.gvk)
	return u
}

// newList returns an empty list of the resource's kind.
func (r *resource) newList() runtime.Object {
	gvk := r.gvk.GroupVersion().WithKind(r.gvk.Kind + "List")
	if r.builtin {
		obj, err := scheme.Scheme.New(gvk)
		if err != nil {
			panic(fmt.Sprintf("kubetest: %v left the scheme: %v", gvk, err)) // checked by newRegistry
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		return obj
	}
	l := &unstructured.UnstructuredList{Object: map[string]any{}}
	l.SetGroupVersionKind(gvk)
	return l
}

// groupResource is the resource's group and plural, as errors name it.
func (r *resource) groupResource() schema.GroupResource { return r.gvr.GroupResource() }

// registry is the set of resources the server serves, and their discovery
// documents. It is immutable after newRegistry.
type registry struct {
	byGVR map[schema.GroupVersionResource]*resource
	byGVK map[schema.GroupVersionKind]*resource
	// groups in discovery order: the legacy core group first, then the
	// others by name.
	groups []*apiGroup
}

// apiGroup is one group of discovery: its versions, preferred first, and
// the resources of each.
type apiGroup struct {
	name      string
	versions  []string
	resources map[string][]*resource // by version, sorted by plural
}

// newRegistry collects the built-in resources of client-go's scheme and the
// custom ones.
//
// A built-in resource is a kind of k8s.io/api with a list kind and object
// metadata. Each group and kind is served at one version only, the one
// kube-aware version ordering ranks first (v2 before v1 before v1beta1),
// because the server cannot convert between versions: client-go's scheme
// has no internal types. The plural comes from meta.UnsafeGuessKindToResource,
// right for every built-in kind (as kube relies on for built-in types); the scope
// from kube's own table (source.ClusterScoped).
func newRegistry(custom []CustomResource) (*registry, error) {
	reg := &registry{
		byGVR: map[schema.GroupVersionResource]*resource{},
		byGVK: map[schema.GroupVersionKind]*resource{},
	}
	best := map[schema.GroupKind]string{}
	for gvk, t := range scheme.Scheme.AllKnownTypes() {
		if !servable(gvk, t) {
			continue
		}
		gk := gvk.GroupKind()
		if v, ok := best[gk]; !ok || version.CompareKubeAwareVersionStrings(gvk.Version, v) > 0 {
			best[gk] = gvk.Version
		}
	}
	for gk, v := range best {
		gvk := gk.WithVersion(v)
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		reg.add(&resource{
			gvr:        plural,
			gvk:        gvk,
			namespaced: !source.ClusterScoped(gk),
			shortNames: shortNames[plural.GroupResource()],
			builtin:    true,
			fields:     fieldLabels[plural.GroupResource()],
		})
	}
	for _, c := range custom {
		if c.GVR.Version == "" || c.GVR.Resource == "" || c.Kind == "" {
			return nil, fmt.Errorf("kubetest: custom resource %q (kind %q) needs a version, a resource and a kind", c.GVR.String(), c.Kind)
		}
		if c.GVR.Resource != strings.ToLower(c.GVR.Resource) {
			return nil, fmt.Errorf("kubetest: custom resource %q: resource names are lower case", c.GVR.String())
		}
		gvk := c.GVR.GroupVersion().WithKind(c.Kind)
		if _, ok := reg.byGVR[c.GVR]; ok {
			return nil, fmt.Errorf("kubetest: custom resource %q is served already", c.GVR.String())
		}
		if _, ok := reg.byGVK[gvk]; ok {
			return nil, fmt.Errorf("kubetest: kind %v of custom resource %q is served already", gvk, c.GVR.String())
		}
		reg.add(&resource{gvr: c.GVR, gvk: gvk, namespaced: c.Namespaced, shortNames: slices.Clone(c.ShortNames)})
	}
	reg.sortGroups()
	return reg, nil
}

// servable reports whether gvk, served as Go type t, is a built-in kind
// that can be listed and watched.
func servable(gvk schema.GroupVersionKind, t reflect.Type) bool {
	if strings.HasSuffix(gvk.Kind, "List") || !strings.HasPrefix(t.PkgPath(), "k8s.io/api/") {
		return false
	}
	if !scheme.Scheme.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind + "List")) {
		return false
	}
	_, ok := reflect.New(t).Interface().(metav1.Object)
	return ok
}

func (reg *registry) add(r *resource) {
	r.path = r.gvr.Group + "/" + r.gvr.Resource
	reg.byGVR[r.gvr] = r
	reg.byGVK[r.gvk] = r
	var g *apiGroup
	for _, have := range reg.groups {
		if have.name == r.gvr.Group {
			g = have
		}
	}
	if g == nil {
		g = &apiGroup{name: r.gvr.Group, resources: map[string][]*resource{}}
		reg.groups = append(reg.groups, g)
	}
	if !slices.Contains(g.versions, r.gvr.Version) {
		g.versions = append(g.versions, r.gvr.Version)
	}
	g.resources[r.gvr.Version] = append(g.resources[r.gvr.Version], r)
}

func (reg *registry) sortGroups() {
	slices.SortFunc(reg.groups, func(a, b *apiGroup) int {
		switch {
		case a.name == "":
			return -1
		case b.name == "":
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	for _, g := range reg.groups {
		slices.SortFunc(g.versions, func(a, b string) int { return version.CompareKubeAwareVersionStrings(b, a) })
		for _, rs := range g.resources {
			slices.SortFunc(rs, func(a, b *resource) int { return strings.Compare(a.gvr.Resource, b.gvr.Resource) })
		}
	}
}

// group returns the discovery group named name.
func (reg *registry) group(name string) (*apiGroup, bool) {
	for _, g := range reg.groups {
		if g.name == name {
			return g, true
		}
	}
	return nil, false
}

// forObject returns the resource of obj's kind: its apiVersion and kind
// when set, or, for a built-in Go type, the kind the scheme knows it by.
func (reg *registry) forObject(obj runtime.Object) (*resource, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			return nil, fmt.Errorf("kubetest: kind of %T: %w", obj, err)
		}
		for _, k := range gvks {
			if r, ok := reg.byGVK[k]; ok {
				return r, nil
			}
		}
		return nil, fmt.Errorf("kubetest: %T (%v) is not served", obj, gvks)
	}
	r, ok := reg.byGVK[gvk]
	if !ok {
		return nil, fmt.Errorf("kubetest: kind %v is not served", gvk)
	}
	return r, nil
}

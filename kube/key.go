package kube

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache"
)

// Key identifies one informer of a Factory: the resource, which of its
// objects are cached, and the Go type they are cached as. Two requests
// with the same Key get the same informer. It is comparable, keys
// Factory.WaitForCacheSync, and Informer and Ref.Key return it.
type Key struct {
	Resource Resource
	Selection
	// Type is the Go type of the informer's objects, by package path and
	// name ("k8s.io/api/core/v1.Pod" for *corev1.Pod): a resource cached
	// as its built-in type, as unstructured objects, as metadata and as a
	// view is four informers.
	Type string
}

// String renders the key as a kubectl command line would name it: the
// resource (its plural, then version and group unless it is a core v1
// resource: "pods", "deployments.v1.apps"), the selection (see
// Selection.String), and, unless the objects are the resource's built-in
// type, what they are: "pods -n shop app=web", "nodes",
// "widgets.v1.example.com -n team-a as unstructured", "pods as metadata",
// "pods -n shop as main.PodView".
func (k Key) String() string {
	var b strings.Builder
	b.WriteString(resourceName(k.Resource.GVR))
	if sel := k.Selection.String(); sel != "" {
		b.WriteByte(' ')
		b.WriteString(sel)
	}
	if t := k.typeLabel(); t != "" {
		b.WriteString(" as ")
		b.WriteString(t)
	}
	return b.String()
}

// resourceName is gvr as kubectl reads a fully qualified resource.
func resourceName(gvr schema.GroupVersionResource) string {
	switch {
	case gvr.Group == "" && gvr.Version == "v1":
		return gvr.Resource
	case gvr.Group == "":
		return gvr.Resource + "." + gvr.Version
	}
	return gvr.Resource + "." + gvr.Version + "." + gvr.Group
}

// Type names of the two types that serve any resource, as typeName gives
// them, and how a Key shows them.
const (
	unstructuredName = "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured.Unstructured"
	metadataName     = "k8s.io/apimachinery/pkg/apis/meta/v1.PartialObjectMetadata"
)

// typeLabel is the short name of k's type, or "" for the resource's own
// built-in type.
func (k Key) typeLabel() string {
	switch {
	case k.Type == "":
		return ""
	case k.Type == unstructuredName:
		return "unstructured"
	case k.Type == metadataName:
		return "metadata"
	case strings.HasPrefix(k.Type, "k8s.io/api/") && k.Resource.Kind != "" && strings.HasSuffix(k.Type, "."+k.Resource.Kind):
		return ""
	}
	// The last element of the package path and the name ("main.PodView"),
	// the path inside a generic type's brackets kept whole.
	t := k.Type
	head := t
	if i := strings.IndexByte(t, '['); i >= 0 {
		head = t[:i]
	}
	if i := strings.LastIndexByte(head, '/'); i >= 0 {
		t = t[i+1:]
	}
	return t
}

// typeName names T in a Key: the package path and name of the type T
// points to.
func typeName[T cache.Object]() string {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

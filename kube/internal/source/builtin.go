package source

import (
	"fmt"
	"path"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtin describes how a built-in Go type is served: which resource, at
// which scope, and how its list decodes. It is computed once per source, by
// reflection, so nothing per item needs reflection's slow paths.
type builtin struct {
	gvk        schema.GroupVersionKind
	resource   string
	namespaced bool
	// elem is the object's struct type (corev1.Pod for *corev1.Pod).
	elem reflect.Type
	// list is the struct a JSON list of elem decodes into (see listOf);
	// items is the index of its Items field.
	list  reflect.Type
	items int
	// listMetaTag and itemsTag are the protobuf field numbers of the list's
	// metadata and items.
	listMetaTag, itemsTag uint64
}

// resolveBuiltin resolves the resource served as Go type t (a pointer to a
// struct registered in client-go's kubernetes scheme).
//
// The scheme itself is not linked: it would link and initialize every API
// group, most of an idle process's memory (process-baseline-rss in bench/).
// builtinPackages, a table generated from it and checked against it by the
// tests, gives the group of t's package and says whether t's kind is
// registered and has a list; the version is the package's last path
// element and the kind is t's name, as for every type of k8s.io/api. Every
// generated list (XList) carries its ListMeta as protobuf field 1 and its
// Items as field 2, which the tests check too.
//
// The plural comes from meta.UnsafeGuessKindToResource, whose rule
// (lower-case kind; -s gets -es, -y gets -ies, endpoints stays) gives the
// right name for every built-in resource; it was checked against the
// apiserver's published discovery documents. Scope comes from
// clusterScoped, a table mirroring the +genclient:nonNamespaced tags of
// k8s.io/api: a type missing from it is namespaced.
func resolveBuiltin(t reflect.Type) (builtin, error) {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return builtin{}, fmt.Errorf("kube: %v is not a pointer to a struct", t)
	}
	if _, ok := reflect.New(t.Elem()).Interface().(runtime.Object); !ok {
		return builtin{}, fmt.Errorf("kube: %v is not a runtime.Object", t)
	}
	pkgPath, kind := t.Elem().PkgPath(), t.Elem().Name()
	rel, ok := strings.CutPrefix(pkgPath, "k8s.io/api/")
	if !ok {
		return builtin{}, fmt.Errorf("kube: %v is not a built-in Kubernetes type (use Dynamic or Metadata for other resources)", t)
	}
	pkg, ok := builtinPackages[rel]
	if !ok || !hasWord(pkg.listable, kind) && !hasWord(pkg.other, kind) {
		return builtin{}, fmt.Errorf("kube: %v is not registered in client-go's scheme: %w", t,
			runtime.NewNotRegisteredErrForType("k8s.io/client-go/kubernetes/scheme", t.Elem()))
	}
	gvk := schema.GroupVersionKind{Group: pkg.group, Version: path.Base(rel), Kind: kind}
	if !hasWord(pkg.listable, kind) {
		return builtin{}, fmt.Errorf("kube: %v (%v) is not a resource that can be listed and watched", t, []schema.GroupVersionKind{gvk})
	}
	b := builtin{gvk: gvk, elem: t.Elem(), list: listOf(t.Elem()), items: listItems, listMetaTag: 1, itemsTag: 2}
	plural, _ := meta.UnsafeGuessKindToResource(b.gvk)
	b.resource = plural.Resource
	b.namespaced = !clusterScoped[b.gvk.GroupKind()]
	return b, nil
}

// builtinPackage is what client-go's kubernetes scheme registers from one
// package of k8s.io/api: its API group, and its kinds, space-separated:
// those that can be listed (they have an XList), and the others (lists,
// reviews, options, subresources).
type builtinPackage struct {
	group, listable, other string
}

// hasWord reports whether the space-separated list words holds w.
func hasWord(words, w string) bool {
	for f := range strings.FieldsSeq(words) {
		if f == w {
			return true
		}
	}
	return false
}

// listItems is the index of the Items field in a listOf type.
const listItems = 3

// listOf returns the struct type a JSON list of elem decodes into: the
// fields of the generated XList, under the same JSON names, without
// linking that type (see resolveBuiltin).
func listOf(elem reflect.Type) reflect.Type {
	str := reflect.TypeFor[string]()
	return reflect.StructOf([]reflect.StructField{
		{Name: "APIVersion", Type: str, Tag: `json:"apiVersion,omitempty"`},
		{Name: "Kind", Type: str, Tag: `json:"kind,omitempty"`},
		{Name: "ListMeta", Type: reflect.TypeFor[metav1.ListMeta](), Tag: `json:"metadata,omitempty"`},
		{Name: "Items", Type: reflect.SliceOf(elem), Tag: `json:"items"`},
	})
}

// ClusterScoped reports whether gk is a built-in kind that is not
// namespaced (kube/kubetest serves built-in kinds with the same scope).
func ClusterScoped(gk schema.GroupKind) bool { return clusterScoped[gk] }

// clusterScoped lists the built-in kinds that are not namespaced, in every
// version they are served at. It mirrors the +genclient:nonNamespaced tags of
// k8s.io/api v0.37 and the scope the apiserver's discovery reports. Kinds
// that cannot be listed (reviews) are left out.
var clusterScoped = map[schema.GroupKind]bool{
	{Group: "", Kind: "ComponentStatus"}:  true,
	{Group: "", Kind: "Namespace"}:        true,
	{Group: "", Kind: "Node"}:             true,
	{Group: "", Kind: "PersistentVolume"}: true,

	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,

	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:             true,

	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}: true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:        true,

	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                 true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}: true,

	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"}: true,

	{Group: "networking.k8s.io", Kind: "IPAddress"}:    true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}: true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:  true,

	{Group: "node.k8s.io", Kind: "RuntimeClass"}: true,

	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,

	{Group: "resource.k8s.io", Kind: "DeviceClass"}:               true,
	{Group: "resource.k8s.io", Kind: "DeviceTaintRule"}:           true,
	{Group: "resource.k8s.io", Kind: "ResourcePoolStatusRequest"}: true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:             true,

	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: true,

	{Group: "storage.k8s.io", Kind: "CSIDriver"}:             true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:               true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:          true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:      true,
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}: true,

	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}: true,
}

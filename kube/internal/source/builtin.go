package source

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/kinformer/kinformer/internal/wire"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
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
	// list is the list's struct type (corev1.PodList); items is the index
	// of its Items field.
	list  reflect.Type
	items int
	// listMetaTag and itemsTag are the protobuf field numbers of the list's
	// metadata and items, read from the struct tags.
	listMetaTag, itemsTag uint64
}

// resolveBuiltin resolves the resource served as Go type t (a pointer to a
// struct registered in client-go's kubernetes scheme).
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
	obj, ok := reflect.New(t.Elem()).Interface().(runtime.Object)
	if !ok {
		return builtin{}, fmt.Errorf("kube: %v is not a runtime.Object", t)
	}
	if !strings.HasPrefix(t.Elem().PkgPath(), "k8s.io/api/") {
		return builtin{}, fmt.Errorf("kube: %v is not a built-in Kubernetes type (use Dynamic or Metadata for other resources)", t)
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return builtin{}, fmt.Errorf("kube: %v is not registered in client-go's scheme: %w", t, err)
	}
	var found []schema.GroupVersionKind
	for _, gvk := range gvks {
		if scheme.Scheme.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind + "List")) {
			found = append(found, gvk)
		}
	}
	switch len(found) {
	case 0:
		return builtin{}, fmt.Errorf("kube: %v (%v) is not a resource that can be listed and watched", t, gvks)
	case 1:
	default:
		return builtin{}, fmt.Errorf("kube: %v is registered under several kinds %v", t, found)
	}
	b := builtin{gvk: found[0], elem: t.Elem()}
	plural, _ := meta.UnsafeGuessKindToResource(b.gvk)
	b.resource = plural.Resource
	b.namespaced = !clusterScoped[b.gvk.GroupKind()]

	listObj, err := scheme.Scheme.New(b.gvk.GroupVersion().WithKind(b.gvk.Kind + "List"))
	if err != nil {
		return builtin{}, fmt.Errorf("kube: list type of %v: %w", t, err)
	}
	b.list = reflect.TypeOf(listObj).Elem()
	itemsField, ok := b.list.FieldByName("Items")
	if !ok || itemsField.Type != reflect.SliceOf(b.elem) {
		return builtin{}, fmt.Errorf("kube: %v has no Items field of []%v", b.list, b.elem)
	}
	b.items = itemsField.Index[0]
	b.itemsTag = wire.Number(itemsField)
	if lm, ok := b.list.FieldByName("ListMeta"); ok {
		b.listMetaTag = wire.Number(lm)
	}
	return b, nil
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

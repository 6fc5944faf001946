package kube

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

func TestResourceForBuiltins(t *testing.T) {
	tests := []struct {
		got  func() (Resource, error)
		want Resource
	}{
		{ResourceFor[*corev1.Pod], Resource{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "Pod", true}},
		{ResourceFor[*corev1.Endpoints], Resource{schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}, "Endpoints", true}},
		{ResourceFor[*corev1.Node], Resource{schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, "Node", false}},
		{ResourceFor[*corev1.Namespace], Resource{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "Namespace", false}},
		{ResourceFor[*corev1.ComponentStatus], Resource{schema.GroupVersionResource{Version: "v1", Resource: "componentstatuses"}, "ComponentStatus", false}},
		{ResourceFor[*appsv1.Deployment], Resource{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment", true}},
		{ResourceFor[*networkingv1.Ingress], Resource{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, "Ingress", true}},
		{ResourceFor[*networkingv1.NetworkPolicy], Resource{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, "NetworkPolicy", true}},
		{ResourceFor[*networkingv1.IngressClass], Resource{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}, "IngressClass", false}},
		{ResourceFor[*storagev1.StorageClass], Resource{schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}, "StorageClass", false}},
		{ResourceFor[*rbacv1.ClusterRoleBinding], Resource{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, "ClusterRoleBinding", false}},
		{ResourceFor[*policyv1.PodDisruptionBudget], Resource{schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, "PodDisruptionBudget", true}},
		{ResourceFor[*discoveryv1.EndpointSlice], Resource{schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}, "EndpointSlice", true}},
	}
	for _, tt := range tests {
		got, err := tt.got()
		if err != nil {
			t.Errorf("%v: %v", tt.want.Kind, err)
			continue
		}
		if got != tt.want {
			t.Errorf("got %+v, want %+v", got, tt.want)
		}
	}
}

// Every listable kind in client-go's scheme resolves to itself, with a list
// type the fast protobuf path can decode.
func TestResolveBuiltinCoversTheScheme(t *testing.T) {
	n := 0
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		if !strings.HasPrefix(typ.PkgPath(), "k8s.io/api/") || strings.HasSuffix(gvk.Kind, "List") ||
			!scheme.Scheme.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind+"List")) {
			continue
		}
		b, err := resolveBuiltin(reflect.PointerTo(typ))
		if err != nil {
			t.Errorf("%v: %v", gvk, err)
			continue
		}
		n++
		if b.gvk != gvk || b.itemsTag == 0 || b.listMetaTag == 0 || b.resource == "" {
			t.Errorf("%v resolved to %+v", gvk, b)
		}
		if !reflect.PointerTo(typ).Implements(reflect.TypeFor[protoMessage]()) {
			t.Errorf("%v has no protobuf Unmarshal", gvk)
		}
	}
	if n < 100 {
		t.Fatalf("only %d built-in kinds resolved", n)
	}
	// Every kind in the scope table exists in the scheme, so a typo in the
	// table cannot hide.
	for gk := range clusterScoped {
		if gk.Group == "apiextensions.k8s.io" || gk.Group == "apiregistration.k8s.io" {
			continue // served by the apiserver, not in client-go's scheme
		}
		found := false
		for gvk := range scheme.Scheme.AllKnownTypes() {
			found = found || gvk.GroupKind() == gk
		}
		if !found {
			t.Errorf("clusterScoped names %v, unknown to the scheme", gk)
		}
	}
}

type notAKubeType struct{ metav1.ObjectMeta }

func TestTypedRejectsUnknownTypes(t *testing.T) {
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"not built in", func() error { _, err := ResourceFor[*notAKubeType](); return err }, "notAKubeType"},
		{"not listable", func() error { _, err := ResourceFor[*corev1.Binding](); return err }, "v1.Binding"},
		{"metav1 type", func() error { _, err := ResourceFor[*metav1.PartialObjectMetadata](); return err }, "PartialObjectMetadata"},
		{"typed source", func() error { _, err := Typed[*corev1.Binding](closedPortConfig(t), SourceOptions{}); return err }, "Binding"},
	}
	for _, tt := range tests {
		err := tt.err()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want one naming %q", tt.name, err, tt.want)
		}
	}
}

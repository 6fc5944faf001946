package kube

import (
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
)

func TestResourceForBuiltins(t *testing.T) {
	tests := []struct {
		got  func() (Resource, error)
		want Resource
	}{
		{resourceFor[*corev1.Pod], Resource{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "Pod", true}},
		{resourceFor[*corev1.Endpoints], Resource{schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}, "Endpoints", true}},
		{resourceFor[*corev1.Node], Resource{schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, "Node", false}},
		{resourceFor[*corev1.Namespace], Resource{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "Namespace", false}},
		{resourceFor[*corev1.ComponentStatus], Resource{schema.GroupVersionResource{Version: "v1", Resource: "componentstatuses"}, "ComponentStatus", false}},
		{resourceFor[*appsv1.Deployment], Resource{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment", true}},
		{resourceFor[*networkingv1.Ingress], Resource{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, "Ingress", true}},
		{resourceFor[*networkingv1.NetworkPolicy], Resource{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, "NetworkPolicy", true}},
		{resourceFor[*networkingv1.IngressClass], Resource{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}, "IngressClass", false}},
		{resourceFor[*storagev1.StorageClass], Resource{schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}, "StorageClass", false}},
		{resourceFor[*rbacv1.ClusterRoleBinding], Resource{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, "ClusterRoleBinding", false}},
		{resourceFor[*policyv1.PodDisruptionBudget], Resource{schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, "PodDisruptionBudget", true}},
		{resourceFor[*discoveryv1.EndpointSlice], Resource{schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}, "EndpointSlice", true}},
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

type notAKubeType struct{ metav1.ObjectMeta }

func TestBuiltinResolutionRejectsUnknownTypes(t *testing.T) {
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"not built in", func() error { _, err := resourceFor[*notAKubeType](); return err }, "notAKubeType"},
		{"not listable", func() error { _, err := resourceFor[*corev1.Binding](); return err }, "v1.Binding"},
		{"metav1 type", func() error { _, err := resourceFor[*metav1.PartialObjectMetadata](); return err }, "PartialObjectMetadata"},
		{"typed source", func() error {
			_, err := Source[*corev1.Binding](t.Context(), closedPortConfig(t), SourceOptions{})
			return err
		}, "Binding"},
	}
	for _, tt := range tests {
		err := tt.err()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want one naming %q", tt.name, err, tt.want)
		}
	}
}

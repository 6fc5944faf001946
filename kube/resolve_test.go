package kube

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// discoveryServer serves legacy (unaggregated) discovery documents for the
// core group, apps and one custom resource group.
func discoveryServer(t *testing.T) http.HandlerFunc {
	verbs := metav1.Verbs{"get", "list", "watch"}
	docs := map[string]any{
		"/api": &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}},
		"/apis": &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{
			{Name: "apps", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "apps/v1", Version: "v1"}},
				PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "apps/v1", Version: "v1"}},
			{Name: "example.com", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "example.com/v1", Version: "v1"}},
				PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "example.com/v1", Version: "v1"}},
		}},
		"/api/v1": &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1",
			APIResources: []metav1.APIResource{
				{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: verbs, ShortNames: []string{"po"}},
				{Name: "pods/status", Namespaced: true, Kind: "Pod", Verbs: verbs},
				{Name: "nodes", SingularName: "node", Kind: "Node", Verbs: verbs, ShortNames: []string{"no"}},
				{Name: "endpoints", SingularName: "endpoints", Namespaced: true, Kind: "Endpoints", Verbs: verbs, ShortNames: []string{"ep"}},
			}},
		"/apis/apps/v1": &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "apps/v1",
			APIResources: []metav1.APIResource{
				{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", Verbs: verbs, ShortNames: []string{"deploy"}},
			}},
		"/apis/example.com/v1": &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "example.com/v1",
			APIResources: []metav1.APIResource{
				{Name: "widgets", SingularName: "widget", Namespaced: false, Kind: "Widget", Verbs: verbs, ShortNames: []string{"wg"}},
			}},
	}
	return func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[r.URL.Path]
		if !ok {
			writeStatus(t, w, &metav1.Status{Code: 404, Reason: metav1.StatusReasonNotFound, Message: "not found"})
			return
		}
		w.Header().Set("Content-Type", mediaJSON)
		_ = json.NewEncoder(w).Encode(doc)
	}
}

func TestResolve(t *testing.T) {
	cfg := fakeServer(t, discoveryServer(t))
	pods := Resource{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "Pod", true}
	deploy := Resource{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment", true}
	widgets := Resource{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, "Widget", false}
	tests := map[string]Resource{
		"pods": pods, "pod": pods, "po": pods, "Pod": pods, " PODS ": pods,
		"deploy": deploy, "deployments.apps": deploy, "deployments.v1.apps": deploy, "Deployment": deploy,
		"widgets": widgets, "widget.example.com": widgets, "wg": widgets,
		"no":        {schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, "Node", false},
		"endpoints": {schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}, "Endpoints", true},
	}
	for name, want := range tests {
		got, err := Resolve(context.Background(), cfg, name)
		if err != nil {
			t.Errorf("Resolve(%q): %v", name, err)
			continue
		}
		if got != want {
			t.Errorf("Resolve(%q) = %+v, want %+v", name, got, want)
		}
	}
}

func TestResolveUnknownResource(t *testing.T) {
	cfg := fakeServer(t, discoveryServer(t))
	for _, name := range []string{"gadgets", "pods.example.com", "", ".apps", ".v1.apps", "."} {
		_, err := Resolve(context.Background(), cfg, name)
		if err == nil {
			t.Errorf("Resolve(%q) succeeded", name)
			continue
		}
		if name != "" && !meta.IsNoMatchError(err) && !errors.Is(err, &meta.NoResourceMatchError{}) {
			t.Errorf("Resolve(%q) = %v, want a no-match error", name, err)
		}
	}
}

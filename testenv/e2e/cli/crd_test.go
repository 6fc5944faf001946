package cli_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// TestResourcesByEveryNameIncludingCRDs resolves built-in and custom
// resources by plural, singular, kind, short name and group-qualified name.
func TestResourcesByEveryNameIncludingCRDs(t *testing.T) {
	ctx := within(t, 2*time.Minute)
	dyn, err := dynamic.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets.example.kinformer.dev"},
		"spec": map[string]any{
			"group": "example.kinformer.dev",
			"scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": []any{"wd"}},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Wait until discovery serves the new resource.
	dc, err := discovery.NewDiscoveryClientForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if list, err := dc.ServerResourcesForGroupVersion("example.kinformer.dev/v1"); err == nil && len(list.APIResources) > 0 {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("the CRD never appeared in discovery")
		}
	}
	ns := namespace(t, "cli-crd")
	widgets := schema.GroupVersionResource{Group: "example.kinformer.dev", Version: "v1", Resource: "widgets"}
	for _, name := range []string{"gear", "sprocket"} {
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.kinformer.dev/v1", "kind": "Widget",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": 3},
		}}
		if _, err := dyn.Resource(widgets).Namespace(ns).Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, arg := range []string{"widgets", "widget", "Widget", "wd", "widgets.example.kinformer.dev", "widgets.v1.example.kinformer.dev"} {
		r := kinformer(t, "get", arg, "-n", ns, "-o", "name")
		got := strings.Fields(r.stdout)
		if want := []string{"widget.example.kinformer.dev/gear", "widget.example.kinformer.dev/sprocket"}; !slices.Equal(got, want) {
			t.Errorf("get %s: %q, want %q", arg, got, want)
		}
	}
	for _, arg := range []string{"po", "pod", "Pod", "pods", "deploy", "deployments.apps", "cm", "ns"} {
		if r := kinformer(t, "get", arg, "-n", ns); r.code != 0 {
			t.Errorf("get %s: exit %d: %s", arg, r.code, r.stderr)
		}
	}
}

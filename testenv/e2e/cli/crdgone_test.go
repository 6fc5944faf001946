package cli_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// TestCRDDeletedUnderWatchAndStatsIsToldOnce deletes a custom resource's
// definition under a running watch and stats: each says once that the
// resource type is gone, however many retries fail, and stats does not
// count the retries as stalls.
func TestCRDDeletedUnderWatchAndStatsIsToldOnce(t *testing.T) {
	ctx := within(t, 3*time.Minute)
	dyn, err := dynamic.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	createCRD(t, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "gizmos.gone.kinformer.dev"},
		"spec": map[string]any{
			"group": "gone.kinformer.dev",
			"scope": "Namespaced",
			"names": map[string]any{"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}, "gone.kinformer.dev/v1")
	gvr := schema.GroupVersionResource{Group: "gone.kinformer.dev", Version: "v1", Resource: "gizmos"}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	ns := namespace(t, "cli-crd-gone")
	g := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gone.kinformer.dev/v1", "kind": "Gizmo", "metadata": map[string]any{"name": "one"}}}
	if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, g, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kc := []string{"KUBECONFIG=" + env.KubeconfigPath()}
	w := start(t, kc, kinformerBin, "watch", "gizmos", "-n", ns)
	s := start(t, kc, kinformerBin, "stats", "gizmos", "-n", ns, "--interval", "200ms", "-o", "kv")
	w.stdout.waitFor(ctx, t, 0, "the gizmo", func(l string) bool { return strings.Contains(l, "one") })
	synced := s.stdout.waitFor(ctx, t, 0, "stats synced", func(l string) bool { return keyValues(l)["synced"] == "true" })

	if err := dyn.Resource(crdGVR).Delete(ctx, "gizmos.gone.kinformer.dev", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Let both fail several times over (stats counts the errors).
	errs := func(l string) int { n, _ := strconv.Atoi(keyValues(l)["errors"]); return n }
	last := s.stdout.waitFor(ctx, t, synced, "five failed retries", func(l string) bool { return errs(l) >= 5 })
	w.stderr.waitFor(ctx, t, 0, "that the resource is gone", func(l string) bool { return strings.Contains(l, "no longer has") })
	time.Sleep(3 * time.Second) // more retries, which must say nothing more

	for name, p := range map[string]*running{"watch": w, "stats": s} {
		var gone []string
		for _, l := range p.stderr.snapshot() {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "synced ") { // watch reports its sync
				gone = append(gone, l)
			}
		}
		if len(gone) != 1 || !strings.Contains(gone[0], `the server no longer has the resource type "gizmos.gone.kinformer.dev"`) {
			t.Errorf("%s's stderr, want one line saying the resource type is gone:\n%s", name, p.stderr)
		}
	}
	kv := keyValues(s.stdout.snapshot()[last])
	if kv["stalls"] != "0" {
		t.Errorf("stats counts the retries as stalls: stalls=%q in %q", kv["stalls"], s.stdout.snapshot()[last])
	}
	for name, p := range map[string]*running{"watch": w, "stats": s} {
		if code := p.interrupt(ctx, t); code != 0 {
			t.Errorf("%s: exit %d after Ctrl-C", name, code)
		}
	}
	t.Logf("watch stderr:\n%s\nstats stderr:\n%s", w.stderr, s.stderr)
}

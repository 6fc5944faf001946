package e2e_test

import (
	"context"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/testenv"
)

// newFactory returns a kube.Factory for env, shut down when the test ends.
func newFactory(t *testing.T, errs *errorLog) *kube.Factory {
	t.Helper()
	f, err := kube.NewFactory(env.RESTConfig(), kube.FactoryOptions{
		ErrorHandler: errs.handle,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Shutdown)
	return f
}

// startAndSync starts f's informers and waits for every one to sync.
func startAndSync(t *testing.T, f *kube.Factory, errs *errorLog) {
	t.Helper()
	f.Start(context.Background()) // stopped by Shutdown
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	for key, ok := range f.WaitForCacheSync(ctx) {
		if !ok {
			t.Fatalf("%s did not sync; errors: %v", key, errs.all())
		}
	}
}

// Label and field selectors reach the server: the informer caches exactly
// what a list with the same selectors returns, and an object relabelled out
// of the selection leaves the cache as a delete.
func TestLabelAndFieldSelectors(t *testing.T) {
	ns := namespace(t, "selectors")
	for _, app := range []string{"web", "db"} {
		if err := env.CreatePods(t.Context(), ns, 6, testenv.BulkOptions{NamePrefix: app + "-", Labels: map[string]string{"app": app}}); err != nil {
			t.Fatal(err)
		}
	}
	const labelSel, fieldSel = "app=web", "metadata.name!=web-5"
	errs := &errorLog{}
	f := newFactory(t, errs)
	labelled, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[*corev1.Pod]{Selection: kube.Selection{Namespace: ns, LabelSelector: labelSel}})
	if err != nil {
		t.Fatal(err)
	}
	both, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[*corev1.Pod]{Selection: kube.Selection{Namespace: ns, LabelSelector: labelSel, FieldSelector: fieldSel}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder[*corev1.Pod]{}
	if _, err := labelled.AddHandler(rec.handler(), informer.HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f, errs)
	if n := len(labelled.Cache().List()); n != 6 {
		t.Errorf("label selector: %d pods cached, want 6", n)
	}
	if n := len(both.Cache().List()); n != 5 {
		t.Errorf("label and field selectors: %d pods cached, want 5", n)
	}
	requireCacheMatches(t, labelled.Cache(), listPods(ns, metav1.ListOptions{LabelSelector: labelSel}))
	requireCacheMatches(t, both.Cache(), listPods(ns, metav1.ListOptions{LabelSelector: labelSel, FieldSelector: fieldSel}))

	// web-0 leaves the selection; db-0 joins it.
	pods := env.Clientset().CoreV1().Pods(ns)
	for name, app := range map[string]string{"web-0": "gone", "db-0": "web"} {
		p, err := pods.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Labels["app"] = app
		if _, err := pods.Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	requireCacheMatches(t, labelled.Cache(), listPods(ns, metav1.ListOptions{LabelSelector: labelSel}))
	requireCacheMatches(t, both.Cache(), listPods(ns, metav1.ListOptions{LabelSelector: labelSel, FieldSelector: fieldSel}))
	eventually(t, "selection changes notified", func() (bool, string) {
		out, in := rec.of("web-0"), rec.of("db-0")
		return len(out) == 2 && out[1].kind == "delete" && len(in) == 1 && in[0].kind == "add", "not yet"
	})
	if len(errs.all()) != 0 {
		t.Errorf("errors: %v", errs.all())
	}
}

var widgetsGVR = schema.GroupVersionResource{Group: "e2e.kinformer.dev", Version: "v1", Resource: "widgets"}

// createWidgetCRD installs a namespaced custom resource, widgets, and waits
// until the server serves it.
func createWidgetCRD(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets.e2e.kinformer.dev"},
		"spec": map[string]any{
			"group": "e2e.kinformer.dev",
			"scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": []any{"wdg"}},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(t.Context(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	eventually(t, "widgets served", func() (bool, string) {
		_, err := dyn.Resource(widgetsGVR).Namespace("default").List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

func widget(ns, name string, size int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "e2e.kinformer.dev/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       map[string]any{"size": size},
	}}
}

// A custom resource, resolved by its short name, through the dynamic
// source: initial objects, then adds, updates and deletes.
func TestCustomResourceThroughDynamicSource(t *testing.T) {
	cfg := env.RESTConfig()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	createWidgetCRD(t, dyn)
	ns := namespace(t, "crd")
	widgets := dyn.Resource(widgetsGVR).Namespace(ns)
	for i := range 10 {
		if _, err := widgets.Create(t.Context(), widget(ns, "w-"+strconv.Itoa(i), int64(i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := kube.Resolve(t.Context(), cfg, "wdg")
	if err != nil {
		t.Fatal(err)
	}
	if res.GVR != widgetsGVR || !res.Namespaced || res.Kind != "Widget" {
		t.Fatalf("resolved %+v", res)
	}
	errs := &errorLog{}
	f := newFactory(t, errs)
	inf, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[*unstructured.Unstructured]{Resource: res, Selection: kube.Selection{Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder[*unstructured.Unstructured]{}
	if _, err := inf.AddHandler(rec.handler(), informer.HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f, errs)
	list := func(ctx context.Context) ([]*unstructured.Unstructured, error) {
		l, err := widgets.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return ptrs(l.Items), nil
	}
	requireCacheMatches(t, inf.Cache(), list)

	w3, err := widgets.Get(t.Context(), "w-3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(w3.Object, int64(33), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	if _, err := widgets.Update(t.Context(), w3, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := widgets.Delete(t.Context(), "w-4", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := widgets.Create(t.Context(), widget(ns, "w-new", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	requireCacheMatches(t, inf.Cache(), list)
	cached, ok, _ := inf.Cache().GetByKey(ns + "/w-3")
	if size, _, _ := unstructured.NestedInt64(cached.Object, "spec", "size"); !ok || size != 33 {
		t.Errorf("cached w-3 has size %d, want 33", size)
	}
	eventually(t, "changes notified", func() (bool, string) {
		d := rec.of("w-4")
		return len(rec.of("w-new")) == 1 && len(d) == 2 && d[1].kind == "delete" && !d[1].unknown, "not yet"
	})
	if len(errs.all()) != 0 {
		t.Errorf("errors: %v", errs.all())
	}
}

// A metadata-only informer caches PartialObjectMetadata: the server's names,
// versions, UIDs and labels, without specs.
func TestMetadataOnlyInformer(t *testing.T) {
	ns := namespace(t, "metadata")
	if err := env.CreatePods(t.Context(), ns, 25, testenv.BulkOptions{Labels: map[string]string{"tier": "meta"}}); err != nil {
		t.Fatal(err)
	}
	res := kube.Resource{GVR: corev1.SchemeGroupVersion.WithResource("pods"), Kind: "Pod", Namespaced: true}
	errs := &errorLog{}
	f := newFactory(t, errs)
	inf, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[*metav1.PartialObjectMetadata]{Resource: res, Selection: kube.Selection{Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f, errs)
	mc, err := metadata.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	list := func(ctx context.Context) ([]*metav1.PartialObjectMetadata, error) {
		l, err := mc.Resource(res.GVR).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return ptrs(l.Items), nil
	}
	requireCacheMatches(t, inf.Cache(), list)
	for _, o := range inf.Cache().List() {
		if o.Kind != "PartialObjectMetadata" || o.Labels["tier"] != "meta" || o.UID == "" {
			t.Fatalf("cached %+v, want a pod's metadata", o)
		}
	}
	if err := env.Clientset().CoreV1().Pods(ns).Delete(t.Context(), "pod-7", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	if err := env.CreatePods(t.Context(), ns, 2, testenv.BulkOptions{NamePrefix: "more-"}); err != nil {
		t.Fatal(err)
	}
	requireCacheMatches(t, inf.Cache(), list)
	lister := informer.NewLister(inf.Cache())
	if _, err := lister.Namespace(ns).Get("more-1"); err != nil {
		t.Errorf("lister: %v", err)
	}
	if len(errs.all()) != 0 {
		t.Errorf("errors: %v", errs.all())
	}
}

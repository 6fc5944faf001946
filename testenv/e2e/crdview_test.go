package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kinformer/kinformer/kube"
)

// gadgetView is a view of the Gadget custom resource installed below.
type gadgetView struct {
	kube.ViewMeta
	Size  int64  `kube:"spec.size"`
	Color string `kube:"spec.color"`
	Ready bool   `kube:"status.ready"`
}

// installGadgetCRD installs a namespaced custom resource with a
// structural schema and waits until it is served.
func installGadgetCRD(t *testing.T, dyn dynamic.Interface) kube.Resource {
	t.Helper()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "gadgets." + onDemandGroup},
		"spec": map[string]any{
			"group": onDemandGroup,
			"scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec": map[string]any{"type": "object", "properties": map[string]any{
							"size":  map[string]any{"type": "integer"},
							"color": map[string]any{"type": "string"},
							"notes": map[string]any{"type": "string"},
						}},
						"status": map[string]any{"type": "object", "properties": map[string]any{
							"ready": map[string]any{"type": "boolean"},
						}},
					},
				}},
			}},
		},
	}}
	if _, err := dyn.Resource(crdsGVR).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	var res kube.Resource
	eventually(t, "gadgets served", func() (bool, string) {
		var err error
		if res, err = kube.Resolve(t.Context(), env.RESTConfig(), "gadgets."+onDemandGroup); err != nil {
			return false, err.Error()
		}
		if _, err := dyn.Resource(res.GVR).Namespace("default").List(t.Context(), metav1.ListOptions{}); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return res
}

func gadget(res kube.Resource, ns, name string, size int64, color string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": res.GVR.GroupVersion().String(),
		"kind":       "Gadget",
		"metadata":   map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"app": "gadgets"}},
		"spec":       map[string]any{"size": size, "color": color, "notes": "not in the view"},
	}}
}

// A dynamic view of a custom resource, checked against its CRD's schema,
// equals the dynamic informer's objects projected, after creates, updates
// and deletes; a view of a path the schema does not have fails at
// construction.
func TestDynamicViewEqualsTheDynamicInformerProjected(t *testing.T) {
	cfg := env.RESTConfig()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := installGadgetCRD(t, dyn)
	ns := namespace(t, "crdview")
	gadgets := dyn.Resource(res.GVR).Namespace(ns)
	for i := range 10 {
		if _, err := gadgets.Create(t.Context(), gadget(res, ns, fmt.Sprint("g-", i), int64(i), "red"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	type wrong struct {
		kube.ViewMeta
		Weight int64 `kube:"spec.weight"`
	}
	if _, err := kube.Source[*wrong](t.Context(), cfg, kube.SourceOptions{Resource: res}); !errors.Is(err, kube.ErrInvalidView) {
		t.Errorf("a view of spec.weight, which the schema does not have: %v", err)
	}

	errs := &errorLog{}
	f := newFactory(t, errs)
	sel := kube.InformerOptions[*unstructured.Unstructured]{Resource: res, Selection: kube.Selection{Namespace: ns}}
	full, _, err := kube.Informer(t.Context(), f, sel)
	if err != nil {
		t.Fatal(err)
	}
	view, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[*gadgetView]{Resource: res, Selection: kube.Selection{Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f, errs)

	project := func() map[string]string {
		out := map[string]string{}
		for _, u := range full.Cache().List() {
			size, _, _ := unstructured.NestedInt64(u.Object, "spec", "size")
			color, _, _ := unstructured.NestedString(u.Object, "spec", "color")
			ready, _, _ := unstructured.NestedBool(u.Object, "status", "ready")
			out[u.GetName()] = fmt.Sprintf("%s %s %s %d %s %v", u.GetUID(), u.GetResourceVersion(), u.GetLabels()["app"], size, color, ready)
		}
		return out
	}
	views := func() map[string]string {
		out := map[string]string{}
		for _, v := range view.Cache().List() {
			out[v.Name] = fmt.Sprintf("%s %s %s %d %s %v", v.UID, v.ResourceVersion, v.Labels.Get("app"), v.Size, v.Color, v.Ready)
		}
		return out
	}
	// match waits until the full informer equals a fresh list from the
	// server, then until the views equal its objects projected: equal sets
	// on the way there (both informers halfway) do not count.
	list := func(ctx context.Context) ([]*unstructured.Unstructured, error) {
		l, err := gadgets.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return ptrs(l.Items), nil
	}
	match := func(what string) {
		t.Helper()
		requireCacheMatches(t, full.Cache(), list)
		eventually(t, what, func() (bool, string) {
			p, v := project(), views()
			return maps.Equal(p, v), fmt.Sprintf("projected %v, views %v", p, v)
		})
	}
	match("views equal the projection after the sync")

	for i := range 3 {
		g, err := gadgets.Get(t.Context(), fmt.Sprint("g-", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(g.Object, "blue", "spec", "color")
		_ = unstructured.SetNestedField(g.Object, int64(100+i), "spec", "size")
		if _, err := gadgets.Update(t.Context(), g, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	g, err := gadgets.Get(t.Context(), "g-5", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(g.Object, true, "status", "ready")
	if _, err := gadgets.Update(t.Context(), g, metav1.UpdateOptions{}); err != nil { // no status subresource
		t.Fatal(err)
	}
	for _, name := range []string{"g-7", "g-8"} {
		if err := gadgets.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := gadgets.Create(t.Context(), gadget(res, ns, "late", 42, "green"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	match("views equal the projection after creates, updates and deletes")
	if v := views(); len(v) != 9 {
		t.Errorf("%d views, want 9: %v", len(v), v)
	}
	if errs := errs.all(); len(errs) > 0 {
		t.Errorf("errors: %v", errs)
	}
	f.Shutdown()
	deleteCRD(t, dyn, res)
}

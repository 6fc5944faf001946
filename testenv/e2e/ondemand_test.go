package e2e_test

import (
	"context"
	"strconv"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/testenv"
)

var crdsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// onDemandGroup is the API group of the custom resources this file
// installs and deletes.
const onDemandGroup = "ondemand.e2e.kinformer.dev"

// installCRD installs a namespaced custom resource of onDemandGroup, named
// by its kind (plural: lower-case kind plus "s"), and waits until the
// server serves it and discovery resolves it.
func installCRD(t *testing.T, dyn dynamic.Interface, kind string) kube.Resource {
	t.Helper()
	plural := lower(kind) + "s"
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + onDemandGroup},
		"spec": map[string]any{
			"group": onDemandGroup,
			"scope": "Namespaced",
			"names": map[string]any{"plural": plural, "singular": lower(kind), "kind": kind},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
	if _, err := dyn.Resource(crdsGVR).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	var res kube.Resource
	eventually(t, plural+" served", func() (bool, string) {
		var err error
		if res, err = kube.Resolve(t.Context(), env.RESTConfig(), plural+"."+onDemandGroup); err != nil {
			return false, err.Error()
		}
		if _, err := dyn.Resource(res.GVR).Namespace("default").List(t.Context(), metav1.ListOptions{}); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return res
}

// deleteCRD deletes a custom resource definition and waits until it is
// gone (with it, every object of the resource).
func deleteCRD(t *testing.T, dyn dynamic.Interface, res kube.Resource) {
	t.Helper()
	name := res.GVR.Resource + "." + res.GVR.Group
	if err := dyn.Resource(crdsGVR).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, name+" deleted", func() (bool, string) {
		_, err := dyn.Resource(crdsGVR).Get(t.Context(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, "still there"
	})
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func customObject(res kube.Resource, kind, ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": res.GVR.GroupVersion().String(),
		"kind":       kind,
		"metadata":   map[string]any{"name": name, "namespace": ns},
	}}
}

// Informers acquired with a reference count follow custom resources
// installed and deleted while a factory runs: each starts at once when
// acquired, the last Release of one stops it (leaving no goroutine behind)
// while the factory's other informers keep receiving changes, and a
// resource installed later gets an informer of its own.
func TestOnDemandInformersFollowCRDs(t *testing.T) {
	cfg := env.RESTConfig()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, "ondemand")
	errs := &errorLog{}
	f := newFactory(t, errs)
	pods, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[*corev1.Pod]{Selection: kube.Selection{Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f, errs)
	// The pod informer may report synced before its reflector has opened
	// the watch that follows the list, and with it the watch's guard: a
	// pod seen arriving means that watch runs.
	if err := env.CreatePods(t.Context(), ns, 1, testenv.BulkOptions{NamePrefix: "first-"}); err != nil {
		t.Fatal(err)
	}
	requireCacheMatches(t, pods.Cache(), listPods(ns, metav1.ListOptions{}))
	// Goroutines running now (the pod informer, connections, the
	// control plane's helpers) are not the acquired informers'.
	before := goleak.IgnoreCurrent()

	alpha := installCRD(t, dyn, "Alpha")
	beta := installCRD(t, dyn, "Beta")
	t.Cleanup(func() {
		for _, res := range []kube.Resource{alpha, beta} {
			_ = dyn.Resource(crdsGVR).Delete(context.Background(), res.GVR.Resource+"."+res.GVR.Group, metav1.DeleteOptions{})
		}
	})
	for i := range 3 {
		for _, r := range []struct {
			res  kube.Resource
			kind string
		}{{alpha, "Alpha"}, {beta, "Beta"}} {
			if _, err := dyn.Resource(r.res.GVR).Namespace(ns).Create(t.Context(), customObject(r.res, r.kind, ns, "o-"+strconv.Itoa(i)), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Two users of alpha share one informer; beta has one user.
	opts := func(r kube.Resource) kube.InformerOptions[*unstructured.Unstructured] {
		return kube.InformerOptions[*unstructured.Unstructured]{Resource: r, Selection: kube.Selection{Namespace: ns}}
	}
	alpha1, err := kube.Acquire(t.Context(), f, opts(alpha))
	if err != nil {
		t.Fatal(err)
	}
	alpha2, err := kube.Acquire(t.Context(), f, opts(alpha))
	if err != nil {
		t.Fatal(err)
	}
	betaRef, err := kube.Acquire(t.Context(), f, opts(beta))
	if err != nil {
		t.Fatal(err)
	}
	if alpha1.Informer() != alpha2.Informer() {
		t.Fatal("two Refs to alpha got different informers")
	}
	listOf := func(res kube.Resource) func(ctx context.Context) ([]*unstructured.Unstructured, error) {
		return func(ctx context.Context) ([]*unstructured.Unstructured, error) {
			l, err := dyn.Resource(res.GVR).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			return ptrs(l.Items), nil
		}
	}
	// Acquired after Start: both sync without another Start.
	requireCacheMatches(t, alpha1.Informer().Cache(), listOf(alpha))
	requireCacheMatches(t, betaRef.Informer().Cache(), listOf(beta))

	// beta's definition goes away: its informer sees the objects deleted,
	// then its one user releases it, which stops it.
	betaInf := betaRef.Informer()
	deleteCRD(t, dyn, beta)
	eventually(t, "beta objects deleted from the cache", func() (bool, string) {
		n := len(betaInf.Cache().List())
		return n == 0, strconv.Itoa(n) + " cached"
	})
	betaRef.Release()
	if !betaInf.IsStopped() {
		t.Fatal("last Release returned before beta's informer stopped")
	}
	// One of alpha's two users lets go: alpha runs on.
	alpha1.Release()
	if alpha2.Informer().IsStopped() {
		t.Fatal("alpha stopped while a Ref is held")
	}

	// The others keep running: a new alpha object and a new pod arrive.
	if _, err := dyn.Resource(alpha.GVR).Namespace(ns).Create(t.Context(), customObject(alpha, "Alpha", ns, "late"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.CreatePods(t.Context(), ns, 2, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	requireCacheMatches(t, alpha2.Informer().Cache(), listOf(alpha))
	requireCacheMatches(t, pods.Cache(), listPods(ns, metav1.ListOptions{}))

	// A resource installed now gets an informer of its own, started at once.
	gamma := installCRD(t, dyn, "Gamma")
	t.Cleanup(func() {
		_ = dyn.Resource(crdsGVR).Delete(context.Background(), gamma.GVR.Resource+"."+gamma.GVR.Group, metav1.DeleteOptions{})
	})
	if _, err := dyn.Resource(gamma.GVR).Namespace(ns).Create(t.Context(), customObject(gamma, "Gamma", ns, "g"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gammaRef, err := kube.Acquire(t.Context(), f, opts(gamma))
	if err != nil {
		t.Fatal(err)
	}
	requireCacheMatches(t, gammaRef.Informer().Cache(), listOf(gamma))
	if synced := f.WaitForCacheSync(t.Context()); len(synced) != 3 {
		t.Errorf("factory holds %v, want pods, alpha and gamma", synced)
	}

	// Every acquired informer released: none of their goroutines is left,
	// and only the pod informer remains in the factory.
	alpha2.Release()
	gammaRef.Release()
	goleak.VerifyNone(t, before,
		// Connections the released watches used stay pooled for reuse.
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
	if synced := f.WaitForCacheSync(t.Context()); len(synced) != 1 || pods.IsStopped() {
		t.Errorf("after releasing every Ref the factory holds %v (pods stopped: %v), want only pods", synced, pods.IsStopped())
	}
}

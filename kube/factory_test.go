package kube

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informer"
)

// listWatchServer serves, in JSON, a fixed set of objects per collection
// path: a plain list, or a streaming list (ADDED events and the bookmark
// ending the initial events) that then stays open, as does any other
// watch, until the client goes away.
func listWatchServer(t *testing.T, objects map[string][]runtime.Object) *rest.Config {
	return fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		objs, ok := objects[r.URL.Path]
		if !ok {
			writeStatus(t, w, &metav1.Status{Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound, Message: r.URL.Path})
			return
		}
		q := r.URL.Query()
		if q.Get("watch") != "true" {
			list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}}
			for _, o := range objs {
				list.Items = append(list.Items, *o.(*corev1.Pod))
			}
			writeBody(w, mediaJSON, jsonBytes(t, list))
			return
		}
		w.Header().Set("Content-Type", mediaJSON)
		w.WriteHeader(http.StatusOK)
		if q.Get("sendInitialEvents") == "true" {
			for _, o := range objs {
				_, _ = w.Write(jsonFrame(t, "ADDED", o.DeepCopyObject()))
			}
			end := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "10",
				Annotations: map[string]string{"k8s.io/initial-events-end": "true"}}}
			_, _ = w.Write(jsonFrame(t, "BOOKMARK", end))
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
}

// countingTransport counts the requests of an HTTP client.
type countingTransport struct {
	inner http.RoundTripper
	n     atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.inner.RoundTrip(r)
}

func TestFactoryInformerIsSharedPerResourceNamespaceAndSelectors(t *testing.T) {
	f, err := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, FactoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	a, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{})
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{})
	other, _, _ := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "prod"}})
	selected, _, _ := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{LabelSelector: "app=web"}})
	if a != b || a == other || a == selected || other == selected {
		t.Fatalf("sharing: a==b %v, a==other %v, a==selected %v", a == b, a == other, a == selected)
	}
	cms, _, _ := Informer(t.Context(), f, InformerOptions[*corev1.ConfigMap]{})
	if cms == nil {
		t.Fatal("no config map informer")
	}

	// Dynamic and metadata informers of different resources share a Go
	// type but never an informer.
	pods := Resource{GVR: podsGVR, Namespaced: true}
	widgets := Resource{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Namespaced: true}
	dp, _, _ := Informer(t.Context(), f, InformerOptions[*unstructured.Unstructured]{Resource: pods})
	dp2, _, _ := Informer(t.Context(), f, InformerOptions[*unstructured.Unstructured]{Resource: pods})
	dw, _, _ := Informer(t.Context(), f, InformerOptions[*unstructured.Unstructured]{Resource: widgets})
	mp, _, _ := Informer(t.Context(), f, InformerOptions[*metav1.PartialObjectMetadata]{Resource: pods})
	mw, _, _ := Informer(t.Context(), f, InformerOptions[*metav1.PartialObjectMetadata]{Resource: widgets})
	if dp == nil || dp != dp2 || dp == dw || mp == nil || mp == mw {
		t.Fatalf("dynamic/metadata sharing: dp==dp2 %v, dp==dw %v, mp==mw %v", dp == dp2, dp == dw, mp == mw)
	}
}

func TestFactoryInformerRejectsNonBuiltinType(t *testing.T) {
	f, err := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, FactoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	_, _, err = Informer(t.Context(), f, InformerOptions[*metav1.PartialObjectMetadata]{})
	if err == nil || !strings.Contains(err.Error(), "PartialObjectMetadata") {
		t.Fatalf("err = %v, want one naming the type", err)
	}
}

func TestFactorySharesRateLimiterOnlyWhenLimited(t *testing.T) {
	for _, tc := range []struct {
		qps     float32
		limiter bool
	}{{0, true}, {20, true}, {-1, false}} {
		f, err := NewFactory(&rest.Config{Host: "http://127.0.0.1:1", QPS: tc.qps}, FactoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := f.cfg.RateLimiter != nil; got != tc.limiter {
			t.Errorf("QPS %v: shared rate limiter %v, want %v", tc.qps, got, tc.limiter)
		}
		f.Shutdown()
	}
}

func TestFactorySyncsTypedDynamicAndMetadataInformersOverOneClient(t *testing.T) {
	cfg := listWatchServer(t, map[string][]runtime.Object{
		"/api/v1/namespaces/shop/pods": {pod("shop", "web-0", "8"), pod("shop", "web-1", "9")},
		"/api/v1/pods":                 {pod("shop", "web-0", "8"), pod("shop", "web-1", "9"), pod("db", "pg-0", "7")},
	})
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	inner := hc.Transport
	if inner == nil { // plain HTTP: rest hands out http.DefaultClient
		inner = http.DefaultTransport
	}
	counter := &countingTransport{inner: inner}
	hc = &http.Client{Transport: counter}
	f, err := NewFactory(cfg, FactoryOptions{
		ErrorHandler: func(err error) { t.Error(err) },
		HTTPClient:   hc,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()

	podInf, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "shop"}})
	if err != nil {
		t.Fatal(err)
	}
	pods := informer.NewLister(podInf.Cache())
	all, _, err := Informer(t.Context(), f, InformerOptions[*unstructured.Unstructured]{Resource: Resource{GVR: podsGVR, Namespaced: true}})
	if err != nil {
		t.Fatal(err)
	}
	meta, _, err := Informer(t.Context(), f, InformerOptions[*metav1.PartialObjectMetadata]{Resource: Resource{GVR: podsGVR, Namespaced: true}, Selection: Selection{Namespace: "shop"}})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f.Start(ctx)
	synced := f.WaitForCacheSync(ctx)
	if len(synced) != 3 {
		t.Fatalf("synced %v, want 3 informers", synced)
	}
	for key, ok := range synced {
		if !ok || key.Resource.GVR != podsGVR {
			t.Errorf("%s: synced %v", key, ok)
		}
	}
	if p, err := pods.Namespace("shop").Get("web-1"); err != nil || p.Spec.NodeName != "node-web-1" {
		t.Errorf("typed lister: %v, %v", p, err)
	}
	if n := len(all.Cache().List()); n != 3 {
		t.Errorf("dynamic informer (every namespace) cached %d pods, want 3", n)
	}
	if _, ok, _ := meta.Cache().GetByKey("shop/web-0"); !ok || len(meta.Cache().List()) != 2 {
		t.Errorf("metadata informer cached %d objects, want shop's 2", len(meta.Cache().List()))
	}
	if counter.n.Load() < 3 {
		t.Errorf("shared client carried %d requests, want every informer's", counter.n.Load())
	}

	f.Shutdown()
	// After Shutdown, no informer is handed out (one would never start).
	if _, _, err := Informer(t.Context(), f, InformerOptions[*corev1.ConfigMap]{}); !errors.Is(err, ErrShutdown) {
		t.Errorf("informer asked for after Shutdown: %v, want ErrShutdown", err)
	}
}

func (c *countingTransport) WrappedRoundTripper() http.RoundTripper { return c.inner }

// A namespace applies only to namespaced resources: cluster-scoped ones
// are listed whole, as client-go's factory does.
func TestFactoryIgnoresNamespaceForClusterScopedResources(t *testing.T) {
	paths := make(chan string, 64)
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case paths <- r.URL.Path:
		default:
		}
		writeStatus(t, w, &metav1.Status{Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound})
	})
	f, err := NewFactory(cfg, FactoryOptions{Namespace: "shop", ErrorHandler: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	if _, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Node]{}); err != nil {
		t.Fatal(err)
	}
	crd := Resource{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "clusterwidgets"}}
	if _, _, err := Informer(t.Context(), f, InformerOptions[*unstructured.Unstructured]{Resource: crd}); err != nil {
		t.Fatal(err)
	}
	f.Start(t.Context())
	want := map[string]bool{"/api/v1/nodes": true, "/apis/example.com/v1/clusterwidgets": true}
	for len(want) > 0 {
		p := <-paths
		if strings.Contains(p, "/namespaces/") {
			t.Fatalf("request to %s for a cluster-scoped resource", p)
		}
		delete(want, p)
	}
}

func TestFactoryRejectsBadSelectorsBeforeAnyRequest(t *testing.T) {
	f, err := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, FactoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	for _, tc := range []struct {
		sel  Selection
		want string
	}{
		{Selection{LabelSelector: "app in (web"}, `label selector "app in (web"`},
		{Selection{FieldSelector: "spec.nodeName"}, `field selector "spec.nodeName"`},
	} {
		_, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: tc.sel})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want one naming %s", tc.sel, err, tc.want)
		}
	}
	if synced := f.WaitForCacheSync(t.Context()); len(synced) != 0 {
		t.Errorf("rejected informers were registered: %v", synced)
	}
}

// A cluster-scoped resource has one informer whatever namespace is asked
// for, and its key says no namespace.
func TestFactoryHasOneInformerPerClusterScopedResource(t *testing.T) {
	f, err := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, FactoryOptions{Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	a, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Node]{})
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := Informer(t.Context(), f, InformerOptions[*corev1.Node]{Selection: Selection{Namespace: "other"}})
	if a != b {
		t.Fatal("two informers for one cluster-scoped resource")
	}
	if want := "nodes"; a.Name() != want {
		t.Errorf("informer name %q, want %q", a.Name(), want)
	}
}

// An informer's Transform (here informer.DropManagedFields, the one way to
// drop managedFields) runs before objects are cached.
func TestFactoryTransformRunsBeforeCaching(t *testing.T) {
	withFields := pod("shop", "web-0", "8")
	withFields.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	cfg := listWatchServer(t, map[string][]runtime.Object{"/api/v1/namespaces/shop/pods": {withFields}})
	f, err := NewFactory(cfg, FactoryOptions{ErrorHandler: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	podInf, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "shop"},
		Transform: informer.DropManagedFields[*corev1.Pod]})
	if err != nil {
		t.Fatal(err)
	}
	pods := informer.NewLister(podInf.Cache())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f.Start(ctx)
	for key, ok := range f.WaitForCacheSync(ctx) {
		if !ok {
			t.Fatalf("%s did not sync", key)
		}
	}
	p, err := pods.Namespace("shop").Get("web-0")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.ManagedFields) != 0 {
		t.Fatalf("cached pod keeps managedFields %v", p.ManagedFields)
	}
}

package kube

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/kube/internal/source"
	"github.com/kinformer/kinformer/listwatch"
)

// clusterEnv names a kubeconfig of a real (test) cluster. Tests that need
// one skip without it; testenv's end-to-end runs set it.
const clusterEnv = "KINFORMER_TEST_KUBECONFIG"

// Every built-in resource the cluster serves resolves, from its Go type, to
// the plural and scope the cluster's discovery reports.
func TestClusterDiscoveryMatchesBuiltinTable(t *testing.T) {
	path := os.Getenv(clusterEnv)
	if path == "" {
		t.Skip(clusterEnv + " not set")
	}
	cfg, err := LoadConfig(ConfigOptions{Kubeconfig: path})
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Logf("partial discovery: %v", err)
	}
	checked := 0
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			typ, ok := scheme.Scheme.AllKnownTypes()[gv.WithKind(r.Kind)]
			if !ok || !strings.HasPrefix(typ.PkgPath(), "k8s.io/api/") {
				continue
			}
			b, err := source.BuiltinResource(reflect.PointerTo(typ))
			if err != nil {
				if hasVerbs(r.Verbs, "list", "watch") {
					t.Errorf("%v %s: %v", gv, r.Name, err)
				}
				continue
			}
			checked++
			if b.GVR.Resource != r.Name || b.Namespaced != r.Namespaced {
				t.Errorf("%v %s: resolved %s namespaced=%v, discovery says %s namespaced=%v",
					gv, r.Kind, b.GVR.Resource, b.Namespaced, r.Name, r.Namespaced)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no built-in resource checked")
	}
	t.Logf("%d built-in resources match discovery", checked)
	t.Cleanup(func() { closeIdle(cfg) })

	pods, err := Source[*corev1.Pod](t.Context(), cfg, SourceOptions{Selection: Selection{Namespace: "kube-system"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pods.List(context.Background(), listwatch.Options{Limit: 10}); err != nil {
		t.Fatalf("list pods: %v", err)
	}

}

func hasVerbs(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// clusterConfig returns the test cluster's config, or skips.
func clusterConfig(t *testing.T) *rest.Config {
	path := os.Getenv(clusterEnv)
	if path == "" {
		t.Skip(clusterEnv + " not set")
	}
	cfg, err := LoadConfig(ConfigOptions{Kubeconfig: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeIdle(cfg) })
	return cfg
}

// drainInitial reads a streaming list up to the bookmark that ends it and
// returns the names it added.
func drainInitial[T cache.Object](t *testing.T, w listwatch.Watch[T]) []string {
	t.Helper()
	var names []string
	for {
		ev, err := w.Next()
		if err != nil {
			t.Fatalf("after %v: %v", names, err)
		}
		switch ev.Type {
		case listwatch.Added:
			names = append(names, ev.Object.GetName())
		case listwatch.Bookmark:
			if ev.InitialEventsEnd {
				return names
			}
		default:
			t.Fatalf("unexpected %+v", ev)
		}
	}
}

func TestClusterStreamingListEverySource(t *testing.T) {
	cfg := clusterConfig(t)
	ctx := context.Background()
	opts := listwatch.Options{SendInitialEvents: true, ResourceVersionMatch: listwatch.MatchNotOlderThan, AllowBookmarks: true}
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

	typed, err := Source[*corev1.Namespace](t.Context(), cfg, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tw, err := typed.Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	md, err := Source[*metav1.PartialObjectMetadata](t.Context(), cfg, SourceOptions{Resource: Resource{GVR: nsGVR}})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := md.Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Close()
	dyn, err := Source[*unstructured.Unstructured](t.Context(), cfg, SourceOptions{Resource: Resource{GVR: nsGVR}})
	if err != nil {
		t.Fatal(err)
	}
	dw, err := dyn.Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer dw.Close()
	for name, names := range map[string][]string{"typed": drainInitial(t, tw), "metadata": drainInitial(t, mw), "dynamic": drainInitial(t, dw)} {
		if !slices.Contains(names, "default") || !slices.Contains(names, "kube-system") {
			t.Errorf("%s streaming list of namespaces: %v", name, names)
		}
	}

	page, err := md.List(ctx, listwatch.Options{Limit: 1})
	if err != nil || len(page.Items) != 1 || page.Continue == "" || page.ResourceVersion == "" {
		t.Fatalf("metadata page: %+v, %v", page, err)
	}
	dpage, err := dyn.List(ctx, listwatch.Options{})
	if err != nil || len(dpage.Items) < 2 || dpage.Items[0].GetKind() != "Namespace" {
		t.Fatalf("dynamic list: %+v, %v", dpage, err)
	}
}

func TestClusterErrorsAreMapped(t *testing.T) {
	cfg := clusterConfig(t)
	ctx := context.Background()
	pods, err := Source[*corev1.Pod](t.Context(), cfg, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A version far ahead of the server: after waiting (about 3 s) for its
	// cache to catch up, the apiserver answers 504 with cause
	// ResourceVersionTooLarge.
	_, err = pods.List(ctx, listwatch.Options{ResourceVersion: "999999999", ResourceVersionMatch: listwatch.MatchNotOlderThan})
	if !errors.Is(err, listwatch.ErrTooLargeResourceVersion) {
		t.Fatalf("list at a future version: %v, want ErrTooLargeResourceVersion", err)
	}
	// An unknown resource keeps its 404 and message.
	_, err = mustDynamic(t, cfg, schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).
		List(ctx, listwatch.Options{})
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != 404 {
		t.Fatalf("unknown resource: %v", err)
	}
}

func mustDynamic(t *testing.T, cfg *rest.Config, gvr schema.GroupVersionResource) listwatch.ListerWatcher[*unstructured.Unstructured] {
	lw, err := Source[*unstructured.Unstructured](t.Context(), cfg, SourceOptions{Resource: Resource{GVR: gvr}})
	if err != nil {
		t.Fatal(err)
	}
	return lw
}

// createConfigMap creates a config map through a plain POST.
func createConfigMap(t *testing.T, cfg *rest.Config, ns, name string) {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body := jsonBytes(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}})
	resp, err := client.Post(cfg.Host+"/api/v1/namespaces/"+ns+"/configmaps", mediaJSON, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create %s/%s: %s", ns, name, resp.Status)
	}
}

func TestClusterTypedListThenWatch(t *testing.T) {
	cfg := clusterConfig(t)
	ctx := context.Background()
	var mu sync.Mutex
	var types []string // response content types seen by the source
	wrapped := rest.CopyConfig(cfg)
	wrapped.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil {
				mu.Lock()
				types = append(types, resp.Header.Get("Content-Type"))
				mu.Unlock()
			}
			return resp, err
		})
	}
	cms, err := Source[*corev1.ConfigMap](t.Context(), wrapped, SourceOptions{Selection: Selection{Namespace: "default"}})
	if err != nil {
		t.Fatal(err)
	}
	suffix := strconv.FormatUint(rand.Uint64(), 36)
	a, b := "kube-test-a-"+suffix, "kube-test-b-"+suffix
	createConfigMap(t, cfg, "default", a)
	page, err := cms.List(ctx, listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, cm := range page.Items {
		found = found || (cm.Name == a && cm.Data["k"] == "v")
	}
	if !found {
		t.Fatalf("list lacks the config map: %d items", len(page.Items))
	}
	w, err := cms.Watch(ctx, listwatch.Options{ResourceVersion: page.ResourceVersion, AllowBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	createConfigMap(t, cfg, "default", b)
	for {
		ev, err := w.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == listwatch.Added && ev.Object.Name == b {
			if ev.Object.Data["k"] != "v" || ev.Object.Kind != "ConfigMap" || ev.ResourceVersion == "" {
				t.Fatalf("event %+v", ev)
			}
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(types) < 2 {
		t.Errorf("saw %d responses, want a list and a watch", len(types))
	}
	for _, ct := range types {
		if !strings.HasPrefix(ct, mediaProto) {
			t.Errorf("response in %q, want protobuf", ct)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

package kube

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
)

// doorServer serves the pods of namespace shop and the widgets of
// namespace ns (with the widget CRD) in JSON: plain lists, and watches
// that stream the initial events when asked, then stay open.
func doorServer(t *testing.T) *rest.Config {
	pods := listWatchServer(t, map[string][]runtime.Object{
		"/api/v1/namespaces/shop/pods": {pod("shop", "web-0", "8"), pod("shop", "web-1", "9")},
	})
	var paths []string
	widgets := crdServer(t, widgetCRD, &paths)
	return fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v1/"):
			proxyTo(t, pods, w, r)
		case r.URL.Query().Get("watch") == "true": // widgets: the initial events, then nothing changes
			w.Header().Set("Content-Type", mediaJSON)
			w.WriteHeader(http.StatusOK)
			if r.URL.Query().Get("sendInitialEvents") == "true" {
				list := &unstructured.UnstructuredList{}
				if err := list.UnmarshalJSON([]byte(widgetList)); err != nil {
					t.Error(err)
				}
				for i := range list.Items {
					_, _ = w.Write(jsonFrame(t, "ADDED", &list.Items[i]))
				}
				end := &unstructured.Unstructured{}
				end.SetAPIVersion("example.com/v1")
				end.SetKind("Widget")
				end.SetResourceVersion("7")
				end.SetAnnotations(map[string]string{"k8s.io/initial-events-end": "true"})
				_, _ = w.Write(jsonFrame(t, "BOOKMARK", end))
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			widgets(w, r)
		}
	})
}

// proxyTo forwards r to the server of cfg.
func proxyTo(t *testing.T, cfg *rest.Config, w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, cfg.Host+r.URL.RequestURI(), nil)
	if err != nil {
		t.Error(err)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return // the test is ending
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			w.(http.Flusher).Flush()
		}
		if err != nil {
			return
		}
	}
}

var shopPods = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}

// names returns the names of the objects a reader holds, sorted.
func names[T cache.Object](r cache.Reader[T]) string {
	var out []string
	for _, o := range r.List() {
		out = append(out, o.GetName())
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// Every kind of object comes through the one door, Informer, chosen by
// the type argument (and the Resource for those that serve any): each
// informer syncs from the fake apiserver, its cache holds the objects as
// that type, and its Key is the one WaitForCacheSync answers by.
func TestInformerServesEveryKindThroughOneDoor(t *testing.T) {
	cfg := doorServer(t)
	f, err := NewFactory(cfg, FactoryOptions{ErrorHandler: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang, not a timing
	defer cancel()
	shop := Selection{Namespace: "shop"}
	inNS := Selection{Namespace: "ns"}

	typed, typedKey, err := Informer(ctx, f, InformerOptions[*corev1.Pod]{Selection: shop})
	if err != nil {
		t.Fatal(err)
	}
	dyn, dynKey, err := Informer(ctx, f, InformerOptions[*unstructured.Unstructured]{Resource: widgets, Selection: inNS})
	if err != nil {
		t.Fatal(err)
	}
	meta, metaKey, err := Informer(ctx, f, InformerOptions[*metav1.PartialObjectMetadata]{Resource: shopPods, Selection: shop})
	if err != nil {
		t.Fatal(err)
	}
	view, viewKey, err := Informer(ctx, f, InformerOptions[*testPodView]{Selection: shop})
	if err != nil {
		t.Fatal(err)
	}
	crd, crdKey, err := Informer(ctx, f, InformerOptions[*widgetView]{Resource: widgets, Selection: inNS})
	if err != nil {
		t.Fatal(err)
	}

	f.Start(ctx)
	synced := f.WaitForCacheSync(ctx)
	for key, ok := range synced {
		if !ok {
			t.Fatalf("%s did not sync", key)
		}
	}
	for _, tc := range []struct {
		key       Key
		name      string
		names     string
		fieldSeen bool
	}{
		{typedKey, "pods -n shop", names(typed.Cache()), typed.Cache().List()[0].Spec.NodeName != ""},
		{dynKey, "widgets.v1.example.com -n ns as unstructured", names(dyn.Cache()), dyn.Cache().List()[0].Object["spec"] != nil},
		{metaKey, "pods -n shop as metadata", names(meta.Cache()), meta.Cache().List()[0].Kind == "PartialObjectMetadata"},
		{viewKey, "pods -n shop as kube.testPodView", names(view.Cache()), view.Cache().List()[0].NodeName != ""},
		{crdKey, "widgets.v1.example.com -n ns as kube.widgetView", names(crd.Cache()), crd.Cache().List()[0].Size != 0},
	} {
		if !synced[tc.key] {
			t.Errorf("%s: WaitForCacheSync has no synced entry for the Key Informer returned (%v)", tc.name, synced)
		}
		if tc.key.String() != tc.name {
			t.Errorf("key %q, want %q", tc.key, tc.name)
		}
		want := "web-0,web-1"
		if strings.HasPrefix(tc.name, "widgets") {
			want = "a,b"
		}
		if tc.names != want || !tc.fieldSeen {
			t.Errorf("%s cached %s (a field of the type seen: %v), want %s", tc.name, tc.names, tc.fieldSeen, want)
		}
	}
	if len(synced) != 5 {
		t.Errorf("WaitForCacheSync answered for %d informers, want 5: %v", len(synced), synced)
	}
	// The same request gets the same informer, and the same Key.
	again, key, err := Informer(ctx, f, InformerOptions[*corev1.Pod]{Selection: shop})
	if err != nil || again != typed || key != typedKey {
		t.Errorf("second request: same informer %v, key %v, %v", again == typed, key, err)
	}
}

// Source, the door for hand-built informers, serves every kind as well.
func TestSourceServesEveryKind(t *testing.T) {
	cfg := doorServer(t)
	ctx := t.Context()
	shop := SourceOptions{Selection: Selection{Namespace: "shop"}}
	count := func(name string, n int, err error) {
		t.Helper()
		if err != nil || n != 2 {
			t.Errorf("%s: %d objects, %v; want 2", name, n, err)
		}
	}
	count(listAll[*corev1.Pod](ctx, t, cfg, shop))
	count(listAll[*testPodView](ctx, t, cfg, shop))
	shopMeta := shop
	shopMeta.Resource = shopPods
	count(listAll[*metav1.PartialObjectMetadata](ctx, t, cfg, shopMeta))
	nsWidgets := SourceOptions{Resource: widgets, Selection: Selection{Namespace: "ns"}}
	count(listAll[*unstructured.Unstructured](ctx, t, cfg, nsWidgets))
	count(listAll[*widgetView](ctx, t, cfg, nsWidgets))
}

// listAll makes a Source of T and lists it once.
func listAll[T cache.Object](ctx context.Context, t *testing.T, cfg *rest.Config, opts SourceOptions) (string, int, error) {
	t.Helper()
	name := typeName[T]()
	src, err := Source[T](ctx, cfg, opts)
	if err != nil {
		return name, 0, err
	}
	page, err := src.List(ctx, listwatch.Options{})
	return name, len(page.Items), err
}

type notAView struct {
	Name string
}

func (n *notAView) GetName() string            { return n.Name }
func (n *notAView) GetNamespace() string       { return "" }
func (n *notAView) GetResourceVersion() string { return "" }

// The door says what is wrong with a request, and what to do, before any
// request to the server.
func TestDoorErrorsNameTheTypeAndTheFix(t *testing.T) {
	cfg := closedPortConfig(t)
	f, err := NewFactory(cfg, FactoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	ctx := t.Context()
	check := func(name string, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", name)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", name, err, w)
			}
		}
	}
	_, _, err = Informer(ctx, f, InformerOptions[*unstructured.Unstructured]{})
	check("unstructured without Resource", err, "*unstructured.Unstructured", "InformerOptions.Resource", "Resolve")
	_, err = Acquire(ctx, f, InformerOptions[*metav1.PartialObjectMetadata]{})
	check("metadata without Resource", err, "*v1.PartialObjectMetadata", "InformerOptions.Resource")
	_, err = Source[*unstructured.Unstructured](ctx, cfg, SourceOptions{})
	check("source without Resource", err, "*unstructured.Unstructured", "SourceOptions.Resource")
	_, _, err = Informer(ctx, f, InformerOptions[*notAView]{})
	check("unknown type", err, "*kube.notAView", "kube.ViewOf", "kube.ViewMeta", "InformerOptions.Resource")
	_, _, err = Informer(ctx, f, InformerOptions[*corev1.Binding]{})
	check("built-in type that cannot be listed", err, "v1.Binding", "listed and watched")
	_, _, err = Informer(ctx, f, InformerOptions[*corev1.Pod]{Resource: widgets})
	check("built-in type with another resource", err, "*v1.Pod", "pods", "widgets.v1.example.com")
	_, _, err = Informer(ctx, f, InformerOptions[*testPodView]{Resource: widgets})
	check("view with another resource", err, "testPodView", "pods", "widgets.v1.example.com")
	_, _, err = Informer(ctx, f, InformerOptions[*unstructured.Unstructured]{Resource: Resource{GVR: schema.GroupVersionResource{Resource: "widgets"}}})
	check("resource without version", err, "InformerOptions.Resource", "no version")
	if synced := f.WaitForCacheSync(ctx); len(synced) != 0 {
		t.Errorf("refused requests made informers: %v", synced)
	}
	// A built-in type's own resource, named, is accepted.
	if _, _, err := Informer(ctx, f, InformerOptions[*corev1.Pod]{Resource: shopPods}); err != nil {
		t.Errorf("a built-in type with its own resource: %v", err)
	}
}

func TestKeyStringReadsLikeKubectl(t *testing.T) {
	upper, err := shard.NewSet(shard.UID, shard.Split(2)[1])
	if err != nil {
		t.Fatal(err)
	}
	deploys := Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}
	nodes := Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, Kind: "Node"}
	for _, tc := range []struct {
		key  Key
		want string
	}{
		{Key{Resource: shopPods, Selection: Selection{Namespace: "shop", LabelSelector: "app=web"}, Type: typeName[*corev1.Pod]()}, "pods -n shop app=web"},
		{Key{Resource: nodes, Type: typeName[*corev1.Node]()}, "nodes"},
		{Key{Resource: deploys, Type: "k8s.io/api/apps/v1.Deployment"}, "deployments.v1.apps"},
		{Key{Resource: shopPods, Selection: Selection{FieldSelector: "spec.nodeName=n1"}, Type: typeName[*corev1.Pod]()}, "pods --field-selector spec.nodeName=n1"},
		{Key{Resource: shopPods, Selection: Selection{Namespace: "a", LabelSelector: "x in (1,2)", FieldSelector: "status.phase=Running", Shard: upper}, Type: typeName[*corev1.Pod]()},
			"pods -n a x in (1,2) --field-selector status.phase=Running --shard " + upper.String()},
		{Key{Resource: shopPods, Type: typeName[*metav1.PartialObjectMetadata]()}, "pods as metadata"},
		{Key{Resource: widgets, Selection: Selection{Namespace: "ns"}, Type: typeName[*unstructured.Unstructured]()}, "widgets.v1.example.com -n ns as unstructured"},
		{Key{Resource: shopPods, Type: typeName[*testPodView]()}, "pods as kube.testPodView"},
		{Key{Resource: shopPods, Type: typeName[*ViewOf[*corev1.Pod]]()}, "pods as kube.ViewOf[*k8s.io/api/core/v1.Pod]"},
		{Key{Resource: Resource{GVR: schema.GroupVersionResource{Version: "v2", Resource: "things"}}}, "things.v2"},
	} {
		if got := tc.key.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.key, got, tc.want)
		}
	}
}

// The shard is part of what identifies a factory's informer, and the
// factory's shard applies to informers that set none.
func TestFactoryInformerPerShard(t *testing.T) {
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	lower, err := shard.NewSet(shard.UID, shard.Split(2)[0])
	if err != nil {
		t.Fatal(err)
	}
	upperHalf, err := shard.NewSet(shard.UID, shard.Split(2)[1])
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFactory(cfg, FactoryOptions{Shard: lower})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	def, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{})
	if err != nil {
		t.Fatal(err)
	}
	explicit, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Shard: lower}})
	if err != nil {
		t.Fatal(err)
	}
	upper, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Shard: upperHalf}})
	if err != nil {
		t.Fatal(err)
	}
	if def != explicit || def == upper {
		t.Errorf("informers: factory default %p, same shard %p, other shard %p", def, explicit, upper)
	}
	if got, want := upper.Name(), "pods --shard "+upperHalf.String(); got != want {
		t.Errorf("name %q, want %q", got, want)
	}
}

// A lister is one call away from the informer the door returns.
func TestListerFromTheInformer(t *testing.T) {
	cfg := doorServer(t)
	f, err := NewFactory(cfg, FactoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	inf, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "shop"}})
	if err != nil {
		t.Fatal(err)
	}
	lister := informer.NewLister(inf.Cache())
	f.Start(t.Context())
	if !inf.WaitForCacheSync(t.Context()) {
		t.Fatal("not synced")
	}
	if p, err := lister.Namespace("shop").Get("web-1"); err != nil || p.Name != "web-1" {
		t.Fatalf("lister: %v, %v", p, err)
	}
	if _, err := lister.Namespace("shop").Get("gone"); !errors.Is(err, informer.ErrNotFound) {
		t.Fatalf("missing pod: %v", err)
	}
}

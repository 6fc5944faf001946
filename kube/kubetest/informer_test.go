package kubetest_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/kube/kubetest"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/reflector"
)

// cached returns the keys in an informer's cache, sorted.
func cached[T cache.Object](inf *informer.Shared[T]) []string {
	var keys []string
	for _, obj := range inf.Cache().List() {
		keys = append(keys, obj.GetNamespace()+"/"+obj.GetName())
	}
	slices.Sort(keys)
	return keys
}

// notes records a handler's notifications, in order.
type notes chan string

func (n notes) handler() informer.HandlerFuncs[*corev1.Pod] {
	return informer.HandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, initial bool) { n <- fmt.Sprintf("add %s initial=%t", p.Name, initial) },
		UpdateFunc: func(_, p *corev1.Pod) { n <- fmt.Sprintf("update %s %s", p.Name, p.Labels["v"]) },
		DeleteFunc: func(p *corev1.Pod, unknown bool) { n <- fmt.Sprintf("delete %s unknown=%t", p.Name, unknown) },
	}
}

func (n notes) expect(t *testing.T, want ...string) {
	t.Helper()
	c := ctx(t)
	for _, w := range want {
		select {
		case got := <-n:
			if got != w {
				t.Errorf("handler saw %q, want %q", got, w)
			}
		case <-c.Done():
			t.Fatalf("handler never saw %q", w)
		}
	}
}

func podInformer(t *testing.T, f *kube.Factory, n notes) (*informer.Shared[*corev1.Pod], kube.Key) {
	t.Helper()
	inf, key, err := kube.Informer(ctx(t), f, kube.InformerOptions[*corev1.Pod]{})
	if err != nil {
		t.Fatal(err)
	}
	if n != nil {
		if _, err := inf.AddHandler(n.handler(), informer.HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.Start(ctx(t))
	if !f.WaitForCacheSync(ctx(t))[key] {
		t.Fatalf("%v did not sync", key)
	}
	return inf, key
}

// A factory's typed informer syncs from one streaming list in protobuf
// and then sees a clientset's writes, in order.
func TestFactoryInformerOfPods(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{Objects: []runtime.Object{pod("shop", "a", nil), pod("shop", "b", nil)}})
	f, _ := factory(t, srv, kube.FactoryOptions{})
	n := make(notes, 100)
	inf, _ := podInformer(t, f, n)
	if got := cached(inf); !slices.Equal(got, []string{"shop/a", "shop/b"}) {
		t.Errorf("cache %v", got)
	}
	n.expect(t, "add a initial=true", "add b initial=true")
	if lists := requests(srv, "list"); len(lists) != 0 {
		t.Errorf("lists %v, want none: a streaming list", lists)
	}
	watches := requests(srv, "watch")
	if len(watches) != 1 || watches[0].Query.Get("sendInitialEvents") != "true" || !strings.HasPrefix(watches[0].Accept, "application/vnd.kubernetes.protobuf") {
		t.Errorf("watches %+v, want one streaming list asking for protobuf", watches)
	}

	c := ctx(t)
	pods := clientset(t, srv).CoreV1().Pods("shop")
	if _, err := pods.Create(c, pod("shop", "c", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Patch(c, "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"v":"2"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(c, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := inf.WaitForResourceVersion(c, srv.ResourceVersion()); err != nil {
		t.Fatal(err)
	}
	if got := cached(inf); !slices.Equal(got, []string{"shop/a", "shop/c"}) {
		t.Errorf("cache after the writes %v", got)
	}
	n.expect(t, "add c initial=false", "update a 2", "delete b unknown=false")
}

// An informer of a custom resource, resolved by its short name, caches
// unstructured objects; a metadata informer caches PartialObjectMetadata.
func TestFactoryDynamicAndMetadataInformers(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{
		CustomResources: []kubetest.CustomResource{widgets},
		Objects: []runtime.Object{
			&unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"namespace": "team", "name": "w1"}, "spec": map[string]any{"color": "red"},
			}},
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Labels: map[string]string{"app": "web"}}},
		},
	})
	c := ctx(t)
	res, err := kube.Resolve(c, srv.Config(), "wd")
	if err != nil {
		t.Fatal(err)
	}
	if res != widgetsResource {
		t.Errorf("Resolve(wd) = %+v, want %+v", res, widgetsResource)
	}
	deploys, err := kube.Resolve(c, srv.Config(), "deploy")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := factory(t, srv, kube.FactoryOptions{})
	ws, wkey, err := kube.Informer(c, f, kube.InformerOptions[*unstructured.Unstructured]{Resource: res})
	if err != nil {
		t.Fatal(err)
	}
	md, mkey, err := kube.Informer(c, f, kube.InformerOptions[*metav1.PartialObjectMetadata]{Resource: deploys})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(c)
	if synced := f.WaitForCacheSync(c); !synced[wkey] || !synced[mkey] {
		t.Fatalf("synced %v", synced)
	}
	if got := cached(ws); !slices.Equal(got, []string{"team/w1"}) {
		t.Errorf("widgets cached %v", got)
	}
	if got := cached(md); !slices.Equal(got, []string{"shop/web"}) || md.Cache().List()[0].Labels["app"] != "web" {
		t.Errorf("deployment metadata cached %v", got)
	}

	dc, err := dynamic.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	w, err := dc.Resource(widgets.GVR).Namespace("team").Patch(c, "w1", types.MergePatchType, []byte(`{"spec":{"color":"blue"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.WaitForResourceVersion(c, w.GetResourceVersion()); err != nil {
		t.Fatal(err)
	}
	obj, ok := ws.Cache().GetByNamespaceName("team", "w1")
	if color, _, _ := unstructured.NestedString(obj.Object, "spec", "color"); !ok || color != "blue" {
		t.Errorf("cached widget %v, want spec.color blue", obj)
	}
}

// Against a server without streaming lists, the informer lists in pages.
func TestFactoryInformerPagesWithoutStreamingLists(t *testing.T) {
	var objs []runtime.Object
	for i := range 5 {
		objs = append(objs, pod("ns", fmt.Sprint("p", i), nil))
	}
	srv := kubetest.New(t, kubetest.Options{StreamingListUnsupported: true, Objects: objs})
	f, _ := factory(t, srv, kube.FactoryOptions{Settings: reflector.Settings{PageSize: 2}})
	inf, _ := podInformer(t, f, nil)
	if got := cached(inf); len(got) != 5 {
		t.Errorf("cache %v, want 5 pods", got)
	}
	lists := requests(srv, "list")
	if len(lists) != 3 || lists[0].Query.Get("limit") != "2" || lists[2].Query.Get("continue") == "" {
		t.Errorf("lists %+v, want three pages of 2", lists)
	}
	eventually(t, "the informer's watch", func() bool { return len(requests(srv, "watch")) == 2 })
	if w := requests(srv, "watch"); w[0].Code != 422 || w[1].Query.Get("sendInitialEvents") != "" || w[1].Query.Get("resourceVersion") != srv.ResourceVersion() {
		t.Errorf("watches %+v, want a refused streaming list, then a plain watch from %s", w, srv.ResourceVersion())
	}
}

// An informer cut off while the server changes and compacts resumes its
// watch from a compacted version, gets 410, lists again and converges;
// the delete it missed reaches its handler with the state unknown.
func TestFactoryInformerRelistsAfterCompaction(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{Objects: []runtime.Object{pod("ns", "a", nil), pod("ns", "b", nil)}})
	f, errs := factory(t, srv, kube.FactoryOptions{})
	n := make(notes, 100)
	inf, _ := podInformer(t, f, n)
	n.expect(t, "add a initial=true", "add b initial=true")
	seenRV := inf.LastSyncResourceVersion()

	srv.RefuseFor(time.Hour)
	srv.ResetWatches()
	eventually(t, "a refused request", func() bool { return refused(srv) > 0 })
	if err := srv.Delete(pod("ns", "a", nil)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Create(pod("ns", "c", nil)); err != nil {
		t.Fatal(err)
	}
	srv.Compact()
	srv.RefuseFor(0)

	if err := inf.WaitForResourceVersion(ctx(t), srv.ResourceVersion()); err != nil {
		t.Fatal(err)
	}
	if got := cached(inf); !slices.Equal(got, []string{"ns/b", "ns/c"}) {
		t.Errorf("cache %v, want [ns/b ns/c]", got)
	}
	got := []string{<-n, <-n} // two objects: in no particular order
	slices.Sort(got)
	if want := []string{"add c initial=false", "delete a unknown=true"}; !slices.Equal(got, want) {
		t.Errorf("handler saw %q, want %q", got, want)
	}
	if !slices.ContainsFunc(errs.list(), func(err error) bool { return errors.Is(err, listwatch.ErrExpired) }) {
		t.Errorf("errors %v, want one wrapping ErrExpired", errs.list())
	}
	var resumed, relisted bool
	for _, r := range requests(srv, "watch") {
		resumed = resumed || (r.Code == 200 && r.Query.Get("resourceVersion") == seenRV && r.Query.Get("sendInitialEvents") == "")
		relisted = relisted || (resumed && r.Query.Get("sendInitialEvents") == "true")
	}
	if !resumed || !relisted {
		t.Errorf("watches %+v, want one resumed from %s, then a streaming list", requests(srv, "watch"), seenRV)
	}
}

// refused counts the requests srv refused.
func refused(srv *kubetest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Code == 0 {
			n++
		}
	}
	return n
}

// Whatever a fault does to its watch, the informer comes back, and a pod
// created meanwhile reaches its cache: after a reset it watches again from
// where it was; after a 410 it lists again; after a close, or requests
// refused or answered 503, it does either.
func TestFactoryInformerSurvivesFaults(t *testing.T) {
	const (
		either = iota
		resumes
		relists
	)
	for _, tc := range []struct {
		name string
		fire func(*kubetest.Server)
		then int
	}{
		{"reset", (*kubetest.Server).ResetWatches, resumes},
		{"close", (*kubetest.Server).CloseWatches, either},
		{"expire", (*kubetest.Server).ExpireWatches, relists},
		{"refuse", func(s *kubetest.Server) { s.RefuseNext(3); s.ResetWatches() }, resumes},
		{"unavailable", func(s *kubetest.Server) { s.UnavailableNext(3); s.CloseWatches() }, either},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := kubetest.New(t, kubetest.Options{Objects: []runtime.Object{pod("ns", "a", nil)}})
			f, _ := factory(t, srv, kube.FactoryOptions{})
			inf, _ := podInformer(t, f, nil)
			eventually(t, "the informer's watch", func() bool { return srv.OpenWatches() == 1 })
			tc.fire(srv)
			p := pod("ns", "b", nil)
			if err := srv.Create(p); err != nil {
				t.Fatal(err)
			}
			if err := inf.WaitForKey(ctx(t), "ns/b", p.ResourceVersion); err != nil {
				t.Fatal(err)
			}
			if got := cached(inf); !slices.Equal(got, []string{"ns/a", "ns/b"}) {
				t.Errorf("cache %v", got)
			}
			streams := 0
			for _, r := range requests(srv, "watch") {
				if r.Query.Get("sendInitialEvents") == "true" {
					streams++
				}
			}
			if (tc.then == resumes && streams != 1) || (tc.then == relists && streams < 2) {
				t.Errorf("%d streaming lists, want %s", streams, map[int]string{resumes: "1 (no relist)", relists: "2 or more"}[tc.then])
			}
		})
	}
}

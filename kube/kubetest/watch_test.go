package kubetest_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/kube/kubetest"
	"github.com/kinformer/kinformer/listwatch"
)

// seen is one event as a test compares it.
type seen struct {
	typ  listwatch.EventType
	name string
	rv   string
	end  bool // InitialEventsEnd
}

// next reads one event of w.
func next[T cache.Object](t testing.TB, w listwatch.Watch[T]) seen {
	t.Helper()
	ev, err := w.Next()
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	if ev.Type == listwatch.Error {
		t.Fatalf("Error event: %v", ev.Err)
	}
	return seen{typ: ev.Type, name: ev.Object.GetName(), rv: ev.ResourceVersion, end: ev.InitialEventsEnd}
}

// expectEvents reads len(want) events of w and compares them with want.
func expectEvents[T cache.Object](t testing.TB, what string, w listwatch.Watch[T], want ...seen) {
	t.Helper()
	for _, ev := range want {
		if got := next(t, w); got != ev {
			t.Errorf("%s: event %+v, want %+v", what, got, ev)
		}
	}
}

func podSource(t testing.TB, srv *kubetest.Server, sel kube.Selection) listwatch.ListerWatcher[*corev1.Pod] {
	t.Helper()
	src, err := kube.Source[*corev1.Pod](ctx(t), srv.Config(), kube.SourceOptions{Selection: sel})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// A watch from a version replays every change after it, then goes live;
// every event carries the version of its change.
func TestWatchFromVersion(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{})
	a := pod("ns", "a", nil)
	if err := srv.Create(a); err != nil {
		t.Fatal(err)
	}
	from := srv.ResourceVersion()
	b := pod("ns", "b", nil)
	if err := srv.Create(b); err != nil {
		t.Fatal(err)
	}
	a.Labels = map[string]string{"v": "2"}
	if err := srv.Update(a); err != nil {
		t.Fatal(err)
	}
	if err := srv.Delete(b); err != nil {
		t.Fatal(err)
	}
	w, err := podSource(t, srv, kube.Selection{}).Watch(ctx(t), listwatch.Options{ResourceVersion: from})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	expectEvents(t, "replay", w, seen{listwatch.Added, "b", "3", false}, seen{listwatch.Modified, "a", "4", false}, seen{listwatch.Deleted, "b", "5", false})
	if err := srv.Create(pod("ns", "c", nil)); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, "live", w, seen{listwatch.Added, "c", "6", false})
}

// A streaming list: an Added event per object, the bookmark annotated
// k8s.io/initial-events-end at the list's version, then changes; for typed
// (protobuf), unstructured (JSON) and metadata-only sources alike.
func TestWatchStreamingList(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{
		CustomResources: []kubetest.CustomResource{widgets},
		Objects: []runtime.Object{
			pod("ns", "a", nil), pod("ns", "b", nil),
			&unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"namespace": "ns", "name": "w"}}},
		},
	})
	c := ctx(t)
	stream := listwatch.Options{SendInitialEvents: true, AllowBookmarks: true, ResourceVersionMatch: listwatch.MatchNotOlderThan}
	rv := srv.ResourceVersion()
	pods, err := podSource(t, srv, kube.Selection{}).Watch(c, stream)
	if err != nil {
		t.Fatal(err)
	}
	defer pods.Close()
	expectEvents(t, "pods", pods, seen{listwatch.Added, "a", "2", false}, seen{listwatch.Added, "b", "3", false}, seen{listwatch.Bookmark, "", rv, true})

	dyn, err := kube.Source[*unstructured.Unstructured](c, srv.Config(), kube.SourceOptions{Resource: widgetsResource})
	if err != nil {
		t.Fatal(err)
	}
	dw, err := dyn.Watch(c, stream)
	if err != nil {
		t.Fatal(err)
	}
	defer dw.Close()
	expectEvents(t, "widgets", dw, seen{listwatch.Added, "w", "4", false}, seen{listwatch.Bookmark, "", rv, true})

	md, err := kube.Source[*metav1.PartialObjectMetadata](c, srv.Config(), kube.SourceOptions{Resource: kube.Resource{GVR: corev1.SchemeGroupVersion.WithResource("pods"), Kind: "Pod", Namespaced: true}})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := md.Watch(c, stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Create(pod("ns", "c", nil)); err != nil {
		t.Fatal(err)
	}
	defer mw.Close()
	expectEvents(t, "pod metadata", mw, seen{listwatch.Added, "a", "2", false}, seen{listwatch.Added, "b", "3", false},
		seen{listwatch.Bookmark, "", rv, true}, seen{listwatch.Added, "c", "5", false})
	if got := requests(srv, "watch")[2].Accept; !strings.HasPrefix(got, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;") {
		t.Errorf("metadata watch accepted %q", got)
	}
}

func TestWatchStreamingListUnsupported(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{StreamingListUnsupported: true})
	_, err := podSource(t, srv, kube.Selection{}).Watch(ctx(t), listwatch.Options{SendInitialEvents: true, AllowBookmarks: true, ResourceVersionMatch: listwatch.MatchNotOlderThan})
	if !errors.Is(err, listwatch.ErrStreamingListUnsupported) {
		t.Errorf("streaming list: %v, want ErrStreamingListUnsupported", err)
	}
}

// A watch with a selector sees an object that stops matching as deleted
// and one that starts matching as added, as kube-apiserver sends them.
func TestWatchSelectorTurnsChangesIntoAddsAndDeletes(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{})
	p := pod("ns", "a", map[string]string{"app": "web"})
	if err := srv.Create(p); err != nil {
		t.Fatal(err)
	}
	w, err := podSource(t, srv, kube.Selection{LabelSelector: "app=web"}).Watch(ctx(t), listwatch.Options{ResourceVersion: srv.ResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, app := range []string{"db", "web"} {
		p.Labels["app"] = app
		if err := srv.Update(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Create(pod("ns", "other", map[string]string{"app": "db"})); err != nil {
		t.Fatal(err)
	}
	if err := srv.Delete(p); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, "app=web", w, seen{listwatch.Deleted, "a", "3", false}, seen{listwatch.Added, "a", "4", false}, seen{listwatch.Deleted, "a", "6", false})
}

// Watches end cleanly after timeoutSeconds on the server's clock; a watch
// from a compacted version gets a 410 ERROR event; one from a future
// version is refused as too large.
func TestWatchTimeoutsAndVersions(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	srv := kubetest.New(t, kubetest.Options{Clock: clk, Objects: []runtime.Object{pod("ns", "a", nil)}})
	src := podSource(t, srv, kube.Selection{})
	c := ctx(t)
	w, err := src.Watch(c, listwatch.Options{ResourceVersion: srv.ResourceVersion(), TimeoutSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	eventually(t, "the watch's timer", clk.HasWaiters)
	clk.Step(60 * time.Second)
	if _, err := w.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("Next after the timeout: %v, want io.EOF", err)
	}

	old := srv.ResourceVersion()
	if err := srv.Create(pod("ns", "b", nil)); err != nil {
		t.Fatal(err)
	}
	srv.Compact()
	w, err = src.Watch(c, listwatch.Options{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ev, err := w.Next()
	if err != nil || ev.Type != listwatch.Error || !errors.Is(ev.Err, listwatch.ErrExpired) {
		t.Errorf("watch from %s after Compact: %+v, %v; want an Error event wrapping ErrExpired", old, ev, err)
	}
	if _, err := src.Watch(c, listwatch.Options{ResourceVersion: "1000"}); !errors.Is(err, listwatch.ErrTooLargeResourceVersion) {
		t.Errorf("watch from a future version: %v, want ErrTooLargeResourceVersion", err)
	}
}

// client-go's watches decode the server's streams: a typed clientset's
// (protobuf) and a dynamic client's (JSON).
func TestClientGoWatches(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{CustomResources: []kubetest.CustomResource{widgets}})
	c := ctx(t)
	rv := srv.ResourceVersion()
	pw, err := clientset(t, srv).CoreV1().Pods("ns").Watch(c, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Stop()
	dc, err := dynamic.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	ww, err := dc.Resource(widgets.GVR).Watch(c, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer ww.Stop()
	if err := srv.Create(pod("ns", "a", nil)); err != nil {
		t.Fatal(err)
	}
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"namespace": "ns", "name": "w"}}}
	if err := srv.Create(w); err != nil {
		t.Fatal(err)
	}
	if err := srv.Delete(w); err != nil {
		t.Fatal(err)
	}
	if ev := <-pw.ResultChan(); ev.Type != watch.Added || ev.Object.(*corev1.Pod).Name != "a" || ev.Object.(*corev1.Pod).Spec.NodeName != "node-a" {
		t.Errorf("clientset watch: %v %#v", ev.Type, ev.Object)
	}
	for _, want := range []watch.EventType{watch.Added, watch.Deleted} {
		ev := <-ww.ResultChan()
		if u, ok := ev.Object.(*unstructured.Unstructured); ev.Type != want || !ok || u.GetName() != "w" {
			t.Errorf("dynamic watch: %v %#v, want %v of w", ev.Type, ev.Object, want)
		}
	}
}

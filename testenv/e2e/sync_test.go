package e2e_test

import (
	"context"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/testenv"
)

// podSource is a typed pod source for namespace (all when empty) with the
// given selectors, wrapped in a probe.
func podSource(t *testing.T, opts kube.SourceOptions) *probe[*corev1.Pod] {
	t.Helper()
	src, err := kube.Source[*corev1.Pod](t.Context(), env.RESTConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return newProbe(src)
}

// listPods lists pods from the server (a consistent read).
func listPods(namespace string, opts metav1.ListOptions) func(ctx context.Context) ([]*corev1.Pod, error) {
	return func(ctx context.Context) ([]*corev1.Pod, error) {
		l, err := env.Clientset().CoreV1().Pods(namespace).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		return ptrs(l.Items), nil
	}
}

// 2,000 pods reach the cache every way the reflector fills it: a streaming
// list; when the source cannot stream, a list at "0" (which the watch
// cache answers whole); and paged lists of 500 when the list reaches etcd.
func TestInitialSyncOf2000Pods(t *testing.T) {
	const n, pageSize = 2000, 500
	ns := namespace(t, "sync-2000")
	if err := env.CreatePods(t.Context(), ns, n, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("list from the watch cache", func(t *testing.T) {
		src := podSource(t, kube.SourceOptions{Selection: kube.Selection{Namespace: ns}})
		src.noStreaming = true
		r := runInformer(t, src, informer.Options[*corev1.Pod]{Settings: reflector.Settings{PageSize: pageSize}}, false)
		if got := len(r.inf.Cache().List()); got != n {
			t.Fatalf("synced with %d pods, want %d", got, n)
		}
		lists, _, _, _, _ := src.snapshot()
		if len(lists) == 0 || lists[0].opts.ResourceVersion != "0" || lists[0].opts.Limit != pageSize {
			t.Fatalf("lists %+v, want a first list at \"0\" with limit %d", lists, pageSize)
		}
		requireCacheMatches(t, r.inf.Cache(), listPods(ns, metav1.ListOptions{}))
	})

	t.Run("paged list from etcd", func(t *testing.T) {
		src := podSource(t, kube.SourceOptions{Selection: kube.Selection{Namespace: ns}})
		src.noStreaming = true
		src.consistentLists = true
		r := runInformer(t, src, informer.Options[*corev1.Pod]{Settings: reflector.Settings{PageSize: pageSize}}, false)
		if got := len(r.inf.Cache().List()); got != n {
			t.Fatalf("synced with %d pods, want %d", got, n)
		}
		lists, _, _, _, _ := src.snapshot()
		pages, items := 0, 0
		for i, l := range lists {
			if l.err != nil {
				t.Fatalf("list %d: %v", i, l.err)
			}
			if l.opts.Limit != pageSize || l.items > pageSize {
				t.Errorf("page %d: limit %d, %d items; want pages of at most %d", i, l.opts.Limit, l.items, pageSize)
			}
			if i > 0 && l.opts.Continue != lists[i-1].cont {
				t.Errorf("page %d does not continue page %d", i, i-1)
			}
			pages++
			items += l.items
			if l.cont == "" {
				break
			}
		}
		if pages != n/pageSize || items != n {
			t.Errorf("initial list: %d pages, %d items; want %d pages of %d", pages, items, n/pageSize, pageSize)
		}
		initial := 0
		for _, nt := range r.rec.all() {
			if nt.kind == "add" && nt.initial {
				initial++
			}
		}
		if initial != n {
			t.Errorf("handler got %d initial adds, want %d", initial, n)
		}
		requireCacheMatches(t, r.inf.Cache(), listPods(ns, metav1.ListOptions{}))
	})

	t.Run("streaming list", func(t *testing.T) {
		src := podSource(t, kube.SourceOptions{Selection: kube.Selection{Namespace: ns}})
		r := runInformer(t, src, informer.Options[*corev1.Pod]{}, false)
		if got := len(r.inf.Cache().List()); got != n {
			t.Fatalf("synced with %d pods, want %d", got, n)
		}
		lists, watches, _, _, ends := src.snapshot()
		if len(lists) != 0 || len(watches) == 0 || !watches[0].SendInitialEvents {
			t.Errorf("filled by %d lists and watches %+v; want a streaming list only", len(lists), watches)
		}
		if len(ends) != 1 {
			t.Errorf("initial-events-end bookmarks %v, want 1", ends)
		}
		requireCacheMatches(t, r.inf.Cache(), listPods(ns, metav1.ListOptions{}))
	})
}

// A streaming list fills the cache from a watch with sendInitialEvents,
// ends at the bookmark annotated k8s.io/initial-events-end, and the same
// stream then carries live changes.
func TestStreamingListFinishesAtItsBookmark(t *testing.T) {
	ns := namespace(t, "streaming")
	if err := env.CreatePods(t.Context(), ns, 50, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	src := podSource(t, kube.SourceOptions{Selection: kube.Selection{Namespace: ns}})
	r := runInformer(t, src, informer.Options[*corev1.Pod]{}, false)
	lists, watches, errs, bookmarks, ends := src.snapshot()
	if len(lists) != 0 {
		t.Errorf("%d plain lists, want none", len(lists))
	}
	if len(watches) != 1 || !watches[0].SendInitialEvents || watches[0].ResourceVersionMatch != listwatch.MatchNotOlderThan || !watches[0].AllowBookmarks {
		t.Fatalf("watches %+v, want one streaming list", watches)
	}
	if len(ends) != 1 || len(errs) != 0 {
		t.Fatalf("initial-events-end bookmarks %v, all bookmarks %v, errors %v", ends, bookmarks, errs)
	}
	// The cache is at the end bookmark's version (or a later bookmark's).
	end, _ := strconv.ParseUint(ends[0], 10, 64)
	if got, _ := strconv.ParseUint(r.inf.LastSyncResourceVersion(), 10, 64); end == 0 || got < end {
		t.Errorf("synced at %q, want at least the end bookmark's %q", r.inf.LastSyncResourceVersion(), ends[0])
	}
	requireCacheMatches(t, r.inf.Cache(), listPods(ns, metav1.ListOptions{}))

	// The stream goes on after the bookmark: a new pod arrives on it.
	if err := env.CreatePods(t.Context(), ns, 1, testenv.BulkOptions{NamePrefix: "late-"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "late pod delivered", func() (bool, string) {
		return len(r.rec.of("late-0")) == 1, "no notification yet"
	})
	if _, watches, _, _, _ := src.snapshot(); len(watches) != 1 {
		t.Errorf("%d watches, want the streaming list's only", len(watches))
	}
	requireCacheMatches(t, r.inf.Cache(), listPods(ns, metav1.ListOptions{}))
}

// Added, Modified and Deleted reach the handler in order, each with the
// server's versions, and the delete is not marked state-unknown.
func TestEveryEventTypeInOrder(t *testing.T) {
	ns := namespace(t, "events")
	src := podSource(t, kube.SourceOptions{Selection: kube.Selection{Namespace: ns}})
	r := runInformer(t, src, informer.Options[*corev1.Pod]{}, false)

	pods := env.Clientset().CoreV1().Pods(ns)
	created, err := pods.Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rvs := []string{created.ResourceVersion}
	cur := created
	for i := range 3 {
		cur = cur.DeepCopy()
		cur.Labels = map[string]string{"step": strconv.Itoa(i)}
		if cur, err = pods.Update(t.Context(), cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		rvs = append(rvs, cur.ResourceVersion)
	}
	if err := pods.Delete(t.Context(), "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "delete delivered", func() (bool, string) {
		notes := r.rec.of("p")
		return len(notes) > 0 && notes[len(notes)-1].kind == "delete", "notes so far: " + strconv.Itoa(len(notes))
	})
	notes := r.rec.of("p")
	want := []note{{kind: "add", ns: ns, name: "p", rv: rvs[0]}}
	for i := 1; i < len(rvs); i++ {
		want = append(want, note{kind: "update", ns: ns, name: "p", rv: rvs[i], oldRV: rvs[i-1]})
	}
	if len(notes) < len(want)+1 {
		t.Fatalf("notifications %+v, want %+v then a delete", notes, want)
	}
	for i, w := range want {
		if notes[i] != w {
			t.Errorf("notification %d = %+v, want %+v", i, notes[i], w)
		}
	}
	// Deleting may first update the pod (deletion timestamp, status):
	// those updates chain on from the last one, then comes the delete.
	for i := len(want); i < len(notes)-1; i++ {
		if n := notes[i]; n.kind != "update" || n.oldRV != notes[i-1].rv {
			t.Errorf("notification %d = %+v, want an update from version %s", i, n, notes[i-1].rv)
		}
	}
	if d := notes[len(notes)-1]; d.kind != "delete" || d.unknown {
		t.Errorf("last notification %+v: want a delete with a known final state", d)
	}
	requireCacheMatches(t, r.inf.Cache(), listPods(ns, metav1.ListOptions{}))
	if errs := r.errs.all(); len(errs) != 0 {
		t.Errorf("informer reported %v", errs)
	}
}

// Bookmarks move the informer's resource version forward while nothing it
// selects changes: pods outside its selector are written meanwhile.
func TestBookmarksAdvanceTheResourceVersion(t *testing.T) {
	ns := namespace(t, "bookmarks")
	src := podSource(t, kube.SourceOptions{Selection: kube.Selection{Namespace: ns, LabelSelector: "app=watched"}})
	src.watchTimeout = 5 // a bookmark comes ~2s before each watch's end
	r := runInformer(t, src, informer.Options[*corev1.Pod]{}, false)
	start, _ := strconv.ParseUint(r.inf.LastSyncResourceVersion(), 10, 64)

	if err := env.CreatePods(t.Context(), ns, 5, testenv.BulkOptions{Labels: map[string]string{"app": "other"}}); err != nil {
		t.Fatal(err)
	}
	others, err := env.Clientset().CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	written, _ := strconv.ParseUint(others.ResourceVersion, 10, 64)
	if written <= start {
		t.Fatalf("server at %d, informer started at %d", written, start)
	}
	eventually(t, "a bookmark past the writes", func() (bool, string) {
		_, _, _, bookmarks, _ := src.snapshot()
		for _, b := range bookmarks {
			if v, _ := strconv.ParseUint(b, 10, 64); v >= written {
				got, _ := strconv.ParseUint(r.inf.LastSyncResourceVersion(), 10, 64)
				return got >= written, "informer at " + r.inf.LastSyncResourceVersion()
			}
		}
		return false, "bookmarks so far: " + strconv.Itoa(len(bookmarks))
	})
	if notes := r.rec.all(); len(notes) != 0 {
		t.Errorf("handler notified of %+v; the bookmarks should carry no objects", notes)
	}
	requireCacheMatches(t, r.inf.Cache(), listPods(ns, metav1.ListOptions{LabelSelector: "app=watched"}))
}

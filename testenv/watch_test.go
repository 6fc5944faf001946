package testenv

import (
	"context"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
)

// nextEvent returns the next event of w, or fails the test if the watch closes first or ctx
// ends.
func nextEvent(ctx context.Context, t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed, want an event")
		}
		return ev
	case <-ctx.Done():
		t.Fatalf("no watch event: %v", context.Cause(ctx))
	}
	panic("unreachable")
}

// waitClosed drains w until its result channel closes, returning the events seen on the way.
func waitClosed(ctx context.Context, t *testing.T, w watch.Interface) []watch.Event {
	t.Helper()
	var events []watch.Event
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return events
			}
			events = append(events, ev)
		case <-ctx.Done():
			t.Fatalf("watch still open after %d events: %v", len(events), context.Cause(ctx))
		}
	}
}

// statusCode is the HTTP code of an ERROR watch event, or 0.
func statusCode(ev watch.Event) int32 {
	if st, ok := ev.Object.(*metav1.Status); ok && ev.Type == watch.Error {
		return st.Code
	}
	return 0
}

func TestStreamingListEndsWithInitialEventsBookmark(t *testing.T) {
	dumpLogsOnFailure(t, shared)
	checkStreamingList(t, shared)
}

func TestStreamingListWithoutWatchCache(t *testing.T) {
	env, _ := startNoWatchCache(t)
	checkStreamingList(t, env)
}

// checkStreamingList makes config maps and lists them as a watch stream (WatchList):
// sendInitialEvents=true must give one ADDED per object, then the bookmark that ends the
// initial events.
func checkStreamingList(t *testing.T, env *Env) {
	t.Helper()
	ctx := testContext(t)
	const ns, n = "streaming-list", 40
	if err := env.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if err := env.CreateConfigMaps(ctx, ns, n, BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	yes := true
	w, err := env.Clientset().CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{
		SendInitialEvents:    &yes,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	if err != nil {
		t.Fatalf("streaming list refused: %v", err)
	}
	defer w.Stop()
	added := 0
	for {
		ev := nextEvent(ctx, t, w)
		switch ev.Type {
		case watch.Added:
			added++
			continue
		case watch.Bookmark:
			cm := ev.Object.(*corev1.ConfigMap)
			if cm.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
				continue // An ordinary progress bookmark.
			}
			if added != n {
				t.Errorf("%d initial ADDED events before the initial-events-end bookmark, want %d", added, n)
			}
			if cm.ResourceVersion == "" {
				t.Error("initial-events-end bookmark has no resource version")
			}
			return
		default:
			t.Fatalf("unexpected %s event during the initial events: %v", ev.Type, ev.Object)
		}
	}
}

func TestStopAPIServerRefusesRequestsUntilStarted(t *testing.T) {
	dumpLogsOnFailure(t, shared)
	ctx := testContext(t)
	client := shared.Clientset()
	if err := shared.StopAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := shared.StartAPIServer(context.Background()); err != nil {
			t.Errorf("restore the shared apiserver: %v", err)
		}
	})
	if err := shared.StopAPIServer(ctx); err != nil { // Already stopped: nothing to do.
		t.Fatalf("second StopAPIServer: %v", err)
	}
	_, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	if err == nil {
		t.Fatal("request to a stopped apiserver succeeded")
	}
	if !utilnet.IsConnectionRefused(err) {
		t.Errorf("request to a stopped apiserver: %v, want connection refused", err)
	}
	if err := shared.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("request after StartAPIServer: %v", err)
	}
}

func TestRestartAPIServerEndsOpenWatchesAndServesNewOnes(t *testing.T) {
	dumpLogsOnFailure(t, shared)
	ctx := testContext(t)
	const ns = "restart"
	if err := shared.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	cms := shared.Clientset().CoreV1().ConfigMaps(ns)
	before := createConfigMap(ctx, t, shared.Clientset(), ns, "before")
	createConfigMap(ctx, t, shared.Clientset(), ns, "also-before") // history after before
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	if err := shared.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	// The watch delivers what it had (also-before) and ends: the restart cut it.
	for _, ev := range waitClosed(ctx, t, w) {
		if cm, ok := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Added || !ok || cm.Name != "also-before" {
			t.Errorf("event on the watch cut by the restart: %s %v", ev.Type, ev.Object)
		}
	}

	// The new watch cache starts at the restart: a watch from an older version is gone.
	old, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(ctx, t, old)
	old.Stop()
	if statusCode(ev) != http.StatusGone {
		t.Errorf("watch from before the restart: first event %s %v, want ERROR 410", ev.Type, ev.Object)
	}

	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list after restart: %v", err)
	}
	w2, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("watch after restart: %v", err)
	}
	defer w2.Stop()
	createConfigMap(ctx, t, shared.Clientset(), ns, "after")
	ev = nextEvent(ctx, t, w2)
	if cm, ok := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Added || !ok || cm.Name != "after" {
		t.Fatalf("first event after restart = %s %v, want ADDED after", ev.Type, ev.Object)
	}
}

package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/kube"
)

// A one-object list tells how many objects a sync will receive: the
// object plus the server's remainingItemCount, or the items of a list
// that fits in the page; nothing when the server does not count (a
// selector, an old server).
func TestCountObjectsAsksForOneObject(t *testing.T) {
	for _, tc := range []struct {
		name      string
		body      string
		want      int64
		wantKnown bool
	}{
		{"more follow", `{"metadata":{"continue":"c","remainingItemCount":41},"items":[{}]}`, 42, true},
		{"all in the page", `{"metadata":{},"items":[{}]}`, 1, true},
		{"empty", `{"metadata":{},"items":[]}`, 0, true},
		{"not counted", `{"metadata":{"continue":"c"},"items":[{}]}`, 0, false},
		{"not a list", `garbage`, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []url.URL
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got = append(got, *r.URL)
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			n, ok := countObjects(t.Context(), &rest.Config{Host: srv.URL}, deployTarget("web", 0),
				kube.Selection{Namespace: "web", LabelSelector: "app=x", FieldSelector: "metadata.name!=y"})
			if n != tc.want || ok != tc.wantKnown {
				t.Errorf("countObjects = %d, %t; want %d, %t", n, ok, tc.want, tc.wantKnown)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 {
				t.Fatalf("%d requests, want 1", len(got))
			}
			q := got[0].Query()
			if got[0].Path != "/apis/apps/v1/namespaces/web/deployments" || q.Get("limit") != "1" ||
				q.Get("labelSelector") != "app=x" || q.Get("fieldSelector") != "metadata.name!=y" {
				t.Errorf("request %s", got[0].String())
			}
		})
	}
}

// An informer's progress carries the counted total while its list does
// not say how many objects it holds (a streaming list never does).
func TestLiveProgressUsesTheCountedTotal(t *testing.T) {
	var hits sync.Mutex
	n := 0
	opts := fakeCluster(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("limit") == "1" && r.URL.Query().Get("watch") == "" {
			hits.Lock()
			n++
			hits.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{"continue": "c", "remainingItemCount": 99}, "items": []any{map[string]any{}}})
			return
		}
		http.Error(w, "not here", http.StatusServiceUnavailable)
	})
	opts.Namespace = "web"
	sess, err := opts.connect(t.Context(), []string{"po"})
	if err != nil {
		t.Fatal(err)
	}
	l := &live[*metav1.PartialObjectMetadata]{target: sess.targets[0]}
	l.total.Store(-1)
	l.count(t.Context(), sess.cfg, kube.Selection{Namespace: "web"})
	if got := l.total.Load(); got != 100 {
		t.Errorf("total %d after the count, want 100", got)
	}
	hits.Lock()
	defer hits.Unlock()
	if n != 1 {
		t.Errorf("%d counting lists, want 1", n)
	}
}

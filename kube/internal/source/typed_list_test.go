package source

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/listwatch"
)

func TestTypedListPagesProtobuf(t *testing.T) {
	var queries []url.Values
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces/ns1/pods" {
			t.Errorf("path %q", r.URL.Path)
		}
		if got := r.Header.Get("Accept"); got != acceptTyped {
			t.Errorf("Accept %q", got)
		}
		q := r.URL.Query()
		queries = append(queries, q)
		list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}}
		switch q.Get("continue") {
		case "":
			remaining := int64(1)
			list.Continue, list.RemainingItemCount = "next", &remaining
			list.Items = []corev1.Pod{*pod("ns1", "a", "5"), *pod("ns1", "b", "6")}
		case "next":
			list.Items = []corev1.Pod{*pod("ns1", "c", "7")}
		}
		writeBody(w, mediaProto, protoBytes(t, list))
	})
	lw, err := Typed[*corev1.Pod](cfg, Options{Namespace: "ns1", LabelSelector: "app=x"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := lw.List(ctx, listwatch.Options{Limit: 2, ResourceVersion: "0", LabelSelector: "tier=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) != 2 || first.Continue != "next" || first.ResourceVersion != "10" ||
		first.RemainingItemCount == nil || *first.RemainingItemCount != 1 {
		t.Fatalf("first page: %+v", first)
	}
	p := first.Items[1]
	if p.Name != "b" || p.Namespace != "ns1" || p.ResourceVersion != "6" || p.Spec.NodeName != "node-b" ||
		p.Kind != "Pod" || p.APIVersion != "v1" {
		t.Fatalf("decoded pod: %+v", p)
	}
	second, err := lw.List(ctx, listwatch.Options{Limit: 2, Continue: first.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Items) != 1 || second.Items[0].Name != "c" || second.Continue != "" {
		t.Fatalf("second page: %+v", second)
	}
	if got := queries[0]; got.Get("limit") != "2" || got.Get("resourceVersion") != "0" ||
		got.Get("labelSelector") != "app=x,tier=web" || got.Has("watch") {
		t.Fatalf("first query: %v", got)
	}
	if got := queries[1].Get("continue"); got != "next" {
		t.Fatalf("second query continue %q", got)
	}
}

func TestTypedListAcceptsJSON(t *testing.T) {
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "3"},
			Items: []corev1.Pod{*pod("a", "p1", "2"), *pod("b", "p2", "3")}}
		writeBody(w, mediaJSON, jsonBytes(t, list))
	})
	lw, err := Typed[*corev1.Pod](cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page, err := lw.List(context.Background(), listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 2 || page.Items[1].Name != "p2" || page.ResourceVersion != "3" || page.Items[0].Kind != "Pod" {
		t.Fatalf("page: %+v", page)
	}
}

func TestTypedListOfWrongKindIsAnError(t *testing.T) {
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeBody(w, mediaProto, protoBytes(t, &corev1.ConfigMapList{}))
	})
	lw, err := Typed[*corev1.Pod](cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lw.List(context.Background(), listwatch.Options{}); !errors.Is(err, listwatch.ErrWrongType) {
		t.Fatalf("err = %v, want ErrWrongType", err)
	}
}

func TestTypedListMalformedBodyIsAnError(t *testing.T) {
	body := protoBytes(t, &corev1.PodList{Items: []corev1.Pod{*pod("a", "b", "1")}})
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeBody(w, mediaProto, body[:len(body)-7])
	})
	lw, err := Typed[*corev1.Pod](cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lw.List(context.Background(), listwatch.Options{}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
}

func TestTypedListMapsServerErrors(t *testing.T) {
	tests := []struct {
		name   string
		status metav1.Status
		want   error
	}{
		{"expired", metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (5)"}, listwatch.ErrExpired},
		{"too large", metav1.Status{Code: 504, Reason: metav1.StatusReasonTimeout, Message: "Too large resource version",
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}}}, listwatch.ErrTooLargeResourceVersion},
		{"forbidden", metav1.Status{Code: 403, Reason: metav1.StatusReasonForbidden, Message: "pods is forbidden: User cannot list"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				st := tt.status
				writeStatus(t, w, &st)
			})
			lw, err := Typed[*corev1.Pod](cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = lw.List(context.Background(), listwatch.Options{})
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var se *apierrors.StatusError
			if !errors.As(err, &se) || se.ErrStatus.Code != tt.status.Code || se.ErrStatus.Message != tt.status.Message {
				t.Fatalf("err = %#v, want the server's status %d %q", err, tt.status.Code, tt.status.Message)
			}
		})
	}
}

func TestTypedConnectionRefusedIsUnavailable(t *testing.T) {
	lw, err := Typed[*corev1.Pod](closedPortConfig(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lw.List(context.Background(), listwatch.Options{}); !errors.Is(err, listwatch.ErrUnavailable) {
		t.Fatalf("list err = %v, want ErrUnavailable", err)
	}
	if _, err := lw.Watch(context.Background(), listwatch.Options{}); !errors.Is(err, listwatch.ErrUnavailable) {
		t.Fatalf("watch err = %v, want ErrUnavailable", err)
	}
}

func TestSourcesShareAGivenHTTPClient(t *testing.T) {
	var calls atomic.Int32
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeBody(w, mediaProto, protoBytes(t, &corev1.PodList{}))
	})
	base, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport // what client-go picks for a plain config
	}
	shared := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		return rt.RoundTrip(r)
	})}
	for range 2 {
		lw, err := Typed[*corev1.Pod](cfg, Options{HTTPClient: shared})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lw.List(context.Background(), listwatch.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("%d requests through the shared client, want 2", calls.Load())
	}
}

func TestTypedClusterScopedIgnoresNamespace(t *testing.T) {
	var paths []string
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		if r.URL.Query().Get("watch") == "true" {
			writeBody(w, mediaProtoWatch, nil)
			return
		}
		writeBody(w, mediaProto, protoBytes(t, &corev1.NodeList{Items: []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}}))
	})
	lw, err := Typed[*corev1.Node](cfg, Options{Namespace: "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := lw.List(context.Background(), listwatch.Options{})
	if err != nil || len(page.Items) != 1 || page.Items[0].Name != "n1" {
		t.Fatalf("page %+v, %v", page, err)
	}
	w, err := lw.Watch(context.Background(), listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Next(); err != io.EOF {
		t.Fatalf("empty watch: %v, want io.EOF", err)
	}
	w.Close()
	for _, p := range paths {
		if p != "/api/v1/nodes" {
			t.Fatalf("path %q, want /api/v1/nodes", p)
		}
	}
}

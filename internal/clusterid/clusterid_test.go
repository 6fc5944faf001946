package clusterid

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The identity is read once and remembered; a failure is not, so the
// next call asks again.
func TestReaderAsksUntilItKnows(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces/kube-system" {
			http.NotFound(w, r)
			return
		}
		if calls.Add(1) == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":503,"reason":"ServiceUnavailable"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"kube-system","uid":"u-1"}}`))
	}))
	defer srv.Close()
	defer srv.CloseClientConnections()
	mapped := errors.New("mapped")
	r := New(&rest.Config{Host: srv.URL}, nil, func(err error) error { return errors.Join(mapped, err) })
	if _, err := r.Get(t.Context()); !errors.Is(err, mapped) {
		t.Fatalf("first call: %v, want the mapped 503", err)
	}
	for range 3 {
		if uid, err := r.Get(t.Context()); err != nil || uid != "u-1" {
			t.Fatalf("got %q, %v", uid, err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	r.client.Client.CloseIdleConnections()
}

package serverprobe

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
)

// The factory's probe calls a server back only when /readyz says ready,
// or when the server answers but hides its readiness from this client.
func TestProbeReadyTellsAServerThatIsBack(t *testing.T) {
	var code atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			t.Errorf("probe asked %s", r.URL.Path)
		}
		w.WriteHeader(int(code.Load()))
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client, err := probeClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []int{http.StatusOK, http.StatusForbidden, http.StatusUnauthorized, http.StatusNotFound} {
		code.Store(int32(c))
		if err := probeReady(t.Context(), client); err != nil {
			t.Errorf("readyz %d: %v, want nil", c, err)
		}
	}
	for _, c := range []int{http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		code.Store(int32(c))
		if err := probeReady(t.Context(), client); err == nil {
			t.Errorf("readyz %d: nil, want an error", c)
		}
	}
	srv.Close()
	hc.CloseIdleConnections()
	if err := probeReady(t.Context(), client); err == nil {
		t.Error("a closed server answered the probe")
	}
}

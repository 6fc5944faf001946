package cli

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// listingCluster is a server without streaming lists whose lists hold
// a pod in namespaces a and b and whose watches stay open.
func listingCluster(t *testing.T) *GlobalOptions {
	return fakeCluster(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"sendInitialEvents is forbidden","reason":"Invalid","code":422}`)
			return
		case q.Get("watch") == "true":
			<-r.Context().Done()
			return
		}
		metadataList([]string{"a", "b"}, []types.UID{"u1", "u2"})(w, r)
	})
}

// stats --once prints its sample as soon as the informers have synced,
// not an --interval later: with an hour's interval it still prints (the
// context, which ends the command without a sample, is a backstop).
func TestStatsOncePrintsWhenSynced(t *testing.T) {
	global := listingCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errOut strings.Builder
	err := RunStats(ctx, Streams{Out: &out, ErrOut: &errOut}, global, StatsOptions{Once: true, Interval: time.Hour, Output: statsKVOut}, []string{"pods"})
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Errorf("stats --once was still waiting when its context ended")
	}
	if !strings.Contains(out.String(), "resource=pods namespace=default objects=2 synced=true") {
		t.Errorf("stdout %q, want one synced sample of 2 pods; stderr %q", out.String(), errOut.String())
	}
}

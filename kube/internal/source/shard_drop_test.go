package source

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/shard"
)

// A server that ignores the selector streams every object; each one
// outside the shard is counted as dropped once, however the source learnt
// the mode (its probe, a one-object list, drops nothing the cache misses).
func TestShardedStreamingListCountsEachDroppedObjectOnce(t *testing.T) {
	pods := shardPods(20)
	set := upperHalf
	if set.Contains(pods[0]) {
		// The probe's one object must be outside the shard for it to
		// matter: take the other half.
		var err error
		if set, err = shard.NewSet(shard.UID, shard.Split(2)[0]); err != nil {
			t.Fatal(err)
		}
	}
	if set.Contains(pods[0]) {
		t.Fatal("pods[0] is in both halves")
	}
	srv := &shardServer{t: t, pods: pods, set: set, proto: true}
	for _, p := range pods {
		srv.watch = append(srv.watch, wireEvent{"ADDED", p})
	}
	srv.watch = append(srv.watch, wireEvent{"BOOKMARK", bookmark("100", true)})
	// The first page of a limit=1 list is the first pod alone.
	first := &shardServer{t: t, pods: pods[:1], set: set, proto: true}
	serve := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("limit") == "1" {
			first.serve(w, r)
			return
		}
		srv.serve(w, r)
	}
	var mode gaugeRec
	var dropped counterRec
	lw, err := Typed[*corev1.Pod](fakeServer(t, serve), Options{Shard: set, ShardMetrics: metrics.ShardMetrics{ServerSide: &mode, Dropped: &dropped}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := lw.Watch(t.Context(), listwatch.Options{SendInitialEvents: true, AllowBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	kept := 0
	for {
		ev, err := w.Next()
		if err != nil {
			break
		}
		if ev.Type == listwatch.Added {
			kept++
		}
	}
	names, outside := inShard(pods, set)
	if kept != len(names) || dropped.n.Load() != int64(outside) {
		t.Errorf("%d kept and %d dropped of %d pods, want %d and %d", kept, dropped.n.Load(), len(pods), len(names), outside)
	}
	if mode.v.Load() != 0 {
		t.Errorf("ServerSide %d, want 0", mode.v.Load())
	}
}

package source

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinformer/kinformer/internal/wire"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/shard"
)

// gaugeRec and counterRec record what a source reports.
type gaugeRec struct{ v atomic.Int64 }

func (g *gaugeRec) Set(v float64) { g.v.Store(int64(v)) }

type counterRec struct{ n atomic.Int64 }

func (c *counterRec) Inc() { c.n.Add(1) }

// shardPods are pods with uids, half of them (or so) in upperHalf.
func shardPods(n int) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		p := pod("ns", fmt.Sprintf("p%02d", i), fmt.Sprint(10+i))
		p.UID = types.UID(fmt.Sprintf("0b5f4b5e-8a39-4bde-9d0f-%012d", i*7919))
		out[i] = p
	}
	return out
}

var upperHalf = func() shard.Set {
	s, err := shard.NewSet(shard.UID, shard.Split(2)[1])
	if err != nil {
		panic(err)
	}
	return s
}()

func podNames(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// inShard returns the names of the pods set contains, and how many it
// does not.
func inShard(pods []*corev1.Pod, set shard.Set) (names []string, outside int) {
	for _, p := range pods {
		if set.Contains(p) {
			names = append(names, p.Name)
		} else {
			outside++
		}
	}
	return names, outside
}

// shardServer is an apiserver of pods that, with gate set, applies the
// one shard selector it expects (it cannot parse others) and says so in
// its lists' shardInfo, and otherwise ignores the parameter. It records
// every request's shardSelector and limit.
type shardServer struct {
	t     *testing.T
	pods  []*corev1.Pod
	set   shard.Set
	gate  atomic.Bool
	proto bool
	// watch, when set, is the body of every watch.
	watch []wireEvent
	// omitInfo leaves shardInfo out of lists, except of those asked for
	// in plain JSON: as the apiserver does for PartialObjectMetadataList.
	omitInfo bool

	mu       sync.Mutex
	requests []string // "list|watch shardSelector limit"
}

func (s *shardServer) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	kind := "list"
	if q.Get("watch") == "true" {
		kind = "watch"
	}
	s.requests = append(s.requests, fmt.Sprintf("%s %s limit=%s", kind, q.Get("shardSelector"), q.Get("limit")))
	s.mu.Unlock()
	sel := q.Get("shardSelector")
	if sel != "" && sel != s.set.Selector() {
		s.t.Errorf("shardSelector %q, want %q", sel, s.set.Selector())
	}
	filter := s.gate.Load() && sel != ""
	if kind == "watch" {
		var body []byte
		for _, ev := range s.watch {
			if p, ok := ev.obj.(*corev1.Pod); ok && ev.typ != "BOOKMARK" && filter && !s.set.Contains(p) {
				continue
			}
			if s.proto {
				body = append(body, protoFrame(s.t, ev.typ, ev.obj)...)
			} else {
				body = append(body, jsonFrame(s.t, ev.typ, ev.obj)...)
			}
		}
		ct := mediaJSON
		if s.proto {
			ct = mediaProtoWatch
		}
		writeBody(w, ct, body)
		return
	}
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "100"}}
	for _, p := range s.pods {
		if !filter || s.set.Contains(p) {
			list.Items = append(list.Items, *p)
		}
	}
	if filter && (!s.omitInfo || r.Header.Get("Accept") == mediaJSON) {
		list.ShardInfo = &metav1.ShardInfo{Selector: sel}
	}
	if s.proto && r.Header.Get("Accept") != mediaJSON {
		writeBody(w, mediaProto, protoBytes(s.t, list))
	} else {
		writeBody(w, mediaJSON, jsonBytes(s.t, list))
	}
}

func (s *shardServer) source(m metrics.ShardMetrics) listwatch.ListerWatcher[*corev1.Pod] {
	s.t.Helper()
	lw, err := Typed[*corev1.Pod](fakeServer(s.t, s.serve), Options{Shard: s.set, ShardMetrics: m})
	if err != nil {
		s.t.Fatal(err)
	}
	return lw
}

// Lists send the selector; whether the server applied it or not, the
// source returns exactly the shard's objects, and it reports who filtered.
func TestShardedListKeepsTheShardWhoeverFilters(t *testing.T) {
	pods := shardPods(40)
	want, outside := inShard(pods, upperHalf)
	if len(want) == 0 || outside == 0 {
		t.Fatalf("%d pods in the shard, %d outside: pick other uids", len(want), outside)
	}
	for _, tc := range []struct {
		name        string
		gate, proto bool
		serverSide  int64
		dropped     int64
	}{
		{"server applies it, protobuf", true, true, 1, 0},
		{"server applies it, JSON", true, false, 1, 0},
		{"server ignores it, protobuf", false, true, 0, int64(outside)},
		{"server ignores it, JSON", false, false, 0, int64(outside)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &shardServer{t: t, pods: pods, set: upperHalf, proto: tc.proto}
			srv.gate.Store(tc.gate)
			var mode gaugeRec
			mode.v.Store(-1)
			var dropped counterRec
			lw := srv.source(metrics.ShardMetrics{ServerSide: &mode, Dropped: &dropped})
			page, err := lw.List(t.Context(), listwatch.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := podNames(page.Items); !slices.Equal(got, want) {
				t.Errorf("listed %v, want %v", got, want)
			}
			if mode.v.Load() != tc.serverSide || dropped.n.Load() != tc.dropped {
				t.Errorf("ServerSide %d, Dropped %d; want %d, %d", mode.v.Load(), dropped.n.Load(), tc.serverSide, tc.dropped)
			}
			if want := "list " + upperHalf.Selector() + " limit="; srv.requests[0] != want {
				t.Errorf("request %q, want %q", srv.requests[0], want)
			}
		})
	}
}

// Watches skip the changes of objects outside the shard (all kinds of
// change) when the server does not filter, and let bookmarks through.
func TestShardedWatchSkipsOtherShardsChanges(t *testing.T) {
	pods := shardPods(12)
	var events []wireEvent
	var want []string
	for i, p := range pods {
		typ := []string{"ADDED", "MODIFIED", "DELETED"}[i%3]
		events = append(events, wireEvent{typ, p})
		if upperHalf.Contains(p) {
			want = append(want, typ+" "+p.Name)
		}
	}
	events = append(events, wireEvent{"BOOKMARK", bookmark("200", false)})
	want = append(want, "BOOKMARK ")
	for _, proto := range []bool{true, false} {
		srv := &shardServer{t: t, set: upperHalf, proto: proto, watch: events}
		var dropped counterRec
		lw := srv.source(metrics.ShardMetrics{Dropped: &dropped})
		w, err := lw.Watch(t.Context(), listwatch.Options{ResourceVersion: "100"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			ev, err := w.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(ev.Type)+" "+ev.Object.Name)
		}
		w.Close()
		if !slices.Equal(got, want) {
			t.Errorf("proto %v: events %q, want %q", proto, got, want)
		}
		if _, outside := inShard(pods, upperHalf); dropped.n.Load() != int64(outside) {
			t.Errorf("proto %v: Dropped %d, want %d", proto, dropped.n.Load(), outside)
		}
	}
}

// A streaming list does not say whether the server filtered it, so a
// source that has not learnt the mode yet lists one object first; once it
// knows, it does not ask again.
func TestShardedStreamingListProbesTheModeOnce(t *testing.T) {
	srv := &shardServer{t: t, pods: shardPods(10), set: upperHalf, proto: true,
		watch: []wireEvent{{"BOOKMARK", bookmark("100", true)}}}
	srv.gate.Store(true)
	var mode gaugeRec
	lw := srv.source(metrics.ShardMetrics{ServerSide: &mode})
	for range 2 {
		w, err := lw.Watch(t.Context(), listwatch.Options{SendInitialEvents: true, AllowBookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	sel := upperHalf.Selector()
	if want := []string{"list " + sel + " limit=1", "watch " + sel + " limit=", "watch " + sel + " limit="}; !slices.Equal(srv.requests, want) {
		t.Errorf("requests %q, want %q", srv.requests, want)
	}
	if mode.v.Load() != 1 {
		t.Errorf("ServerSide %d after the probe, want 1", mode.v.Load())
	}
}

// A server that said it filters but then sends an object of another shard
// (it restarted without the feature gate, say) is filtered by the source,
// which reports the change of mode.
func TestShardedSourceTurnsClientSideWhenTheServerStopsFiltering(t *testing.T) {
	pods := shardPods(20)
	srv := &shardServer{t: t, pods: pods, set: upperHalf, proto: true}
	for _, p := range pods {
		srv.watch = append(srv.watch, wireEvent{"MODIFIED", p})
	}
	srv.gate.Store(true)
	var mode gaugeRec
	lw := srv.source(metrics.ShardMetrics{ServerSide: &mode})
	if _, err := lw.List(t.Context(), listwatch.Options{}); err != nil {
		t.Fatal(err)
	}
	if mode.v.Load() != 1 {
		t.Fatalf("ServerSide %d after a filtered list", mode.v.Load())
	}
	srv.gate.Store(false)
	w, err := lw.Watch(t.Context(), listwatch.Options{ResourceVersion: "100"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for {
		ev, err := w.Next()
		if err != nil {
			break
		}
		if !upperHalf.Contains(ev.Object) {
			t.Errorf("%s of %s, outside the shard", ev.Type, ev.Object.Name)
		}
	}
	if mode.v.Load() != 0 {
		t.Errorf("ServerSide %d after an unfiltered watch, want 0", mode.v.Load())
	}
}

func TestListShardInfoReadsOnlyTheMetadata(t *testing.T) {
	info := &metav1.ShardInfo{Selector: upperHalf.Selector()}
	withInfo := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5", ShardInfo: info}, Items: []corev1.Pod{*pod("a", "b", "4")}}
	without := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}, Items: []corev1.Pod{*pod("a", "b", "4")}}
	for _, tc := range []struct {
		name  string
		body  []byte
		proto bool
		want  string
	}{
		{"protobuf", protoBytes(t, withInfo), true, info.Selector},
		{"protobuf without", protoBytes(t, without), true, ""},
		{"JSON", jsonBytes(t, withInfo), false, info.Selector},
		{"JSON without", jsonBytes(t, without), false, ""},
		{"JSON with items first", []byte(`{"kind":"PodList","items":[{"metadata":{"name":"x"}}],"metadata":{"shardInfo":{"selector":"s"}}}`), false, "s"},
		{"not a list", []byte(`[1,2]`), false, ""},
		{"garbage protobuf", append(append([]byte{}, wire.Magic...), 0xff), true, ""},
	} {
		got := ""
		if si := listShardInfo(tc.body, tc.proto); si != nil {
			got = si.Selector
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A list with neither shardInfo nor objects outside the shard does not
// tell: a metadata list, which the apiserver sends without shardInfo, or
// a shard that happens to hold every listed object. The source asks for
// one full object in JSON, whose list says.
func TestShardedListWithoutSignsAsksTheServer(t *testing.T) {
	pods := shardPods(40)
	var inside []*corev1.Pod
	for _, p := range pods {
		if upperHalf.Contains(p) {
			inside = append(inside, p)
		}
	}
	for _, tc := range []struct {
		name       string
		pods       []*corev1.Pod
		gate       bool
		serverSide int64
	}{
		{"server filters, list without shardInfo", pods, true, 1},
		{"server ignores, every object in the shard", inside, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &shardServer{t: t, pods: tc.pods, set: upperHalf, proto: true, omitInfo: true}
			srv.gate.Store(tc.gate)
			var mode gaugeRec
			mode.v.Store(-1)
			lw := srv.source(metrics.ShardMetrics{ServerSide: &mode})
			page, err := lw.List(t.Context(), listwatch.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := inShard(tc.pods, upperHalf); !slices.Equal(podNames(page.Items), want) {
				t.Errorf("listed %v, want %v", podNames(page.Items), want)
			}
			if mode.v.Load() != tc.serverSide {
				t.Errorf("ServerSide %d, want %d", mode.v.Load(), tc.serverSide)
			}
			if want := "list " + upperHalf.Selector() + " limit=1"; len(srv.requests) != 2 || srv.requests[1] != want {
				t.Errorf("requests %q, want the list then %q", srv.requests, want)
			}
		})
	}
}

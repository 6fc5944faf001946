package cli

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shard/replicas"
)

func groupLease(holder, ranges string, age time.Duration, leaving bool) coordinationv1.Lease {
	secs := int32(10)
	renew := metav1.NewMicroTime(testNow.Add(-age))
	l := coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "g-" + holder,
			Annotations: map[string]string{replicas.SlotsAnnotation: "4", replicas.RangesAnnotation: ranges}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &renew},
	}
	if leaving {
		l.Annotations[replicas.LeavingAnnotation] = "true"
	}
	return l
}

// The group view shows each replica's Lease, whether it stands, and names
// the ranges only a lapsed Lease (or none) claims.
func TestShardGroupViewNamesUnclaimedRanges(t *testing.T) {
	var out bytes.Buffer
	err := printShardGroup(&out, "g", []coordinationv1.Lease{
		groupLease("b", "2", 2*time.Second, true),
		groupLease("a", "0,1", time.Second, false),
		groupLease("dead", "3", time.Minute, false),
	}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"REPLICA  LEASE",
		"a        default/g-a     1s ago",
		"true    false    0,1 (of 4)",
		"dead     default/g-dead  1m0s ago  false   false    3 (of 4)",
		"true     2 (of 4)",
		"Ranges no standing Lease claims: 3\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Index(got, "g-a") > strings.Index(got, "g-b") {
		t.Errorf("Leases not in name order:\n%s", got)
	}
}

func TestShardGroupViewWithoutLeases(t *testing.T) {
	var out bytes.Buffer
	if err := printShardGroup(&out, "g", nil, testNow); err != nil || !strings.Contains(out.String(), `No Lease of group "g"`) {
		t.Errorf("%q, %v", out.String(), err)
	}
}

func TestShardsRejectsBadFlagsBeforeConnecting(t *testing.T) {
	for _, opts := range []ShardsOptions{{Split: 4, By: "name"}, {Split: 0, By: "uid"}} {
		err := RunShards(t.Context(), Streams{}, &GlobalOptions{}, opts, []string{"pods"})
		var ue *UserError
		if !errors.As(err, &ue) {
			t.Errorf("%+v: %v, want a UserError", opts, err)
		}
	}
}

// A Lease's slot count is text from the cluster: a huge one is shown as
// invalid, and neither sizes the list of unclaimed ranges nor its work.
func TestShardGroupViewBoundsTheSlotCountItReads(t *testing.T) {
	huge := groupLease("a", "0", time.Second, false)
	huge.Annotations[replicas.SlotsAnnotation] = "2000000"
	var out bytes.Buffer
	var err error
	if n := allocatedBy(func() { err = printShardGroup(&out, "g", []coordinationv1.Lease{huge}, testNow) }); n > 1<<20 {
		t.Errorf("printShardGroup allocated %d bytes for a Lease of 2000000 slots", n)
	}
	if err != nil || !strings.Contains(out.String(), "0 (of 2000000: invalid)") || strings.Contains(out.String(), "no standing Lease claims") {
		t.Errorf("%v:\n%.500s", err, out.String())
	}
}

// --split N counts each range's objects against a real (fake) server, and
// sums the spread up as a skew: namespaces ns0 to ns99 all fall in the
// first of three ranges by namespace, and the hint says why; by uid they
// spread.
func TestShardsSplitShowsTheSpreadAndTheSkew(t *testing.T) {
	var namespaces []string
	var uids []types.UID
	for i := range 100 {
		namespaces = append(namespaces, fmt.Sprintf("ns%d", i))
		uids = append(uids, types.UID(fmt.Sprintf("0b5f4b5e-8a39-4bde-9d0f-%012d", i*7919)))
	}
	global := fakeCluster(t, metadataList(namespaces, uids))
	global.AllNamespaces = true
	var out bytes.Buffer
	if err := RunShards(t.Context(), Streams{Out: &out}, global, ShardsOptions{Split: 3, By: "namespace"}, []string{"pods"}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	flat := strings.Join(strings.Fields(got), " ")
	for _, want := range []string{
		"pods 0/3 0x0000000000000000 0x5555555555555555 100 by kinformer",
		"pods 1/3 0x5555555555555555 0xaaaaaaaaaaaaaaaa 0 by kinformer",
		"pods 2/3 0xaaaaaaaaaaaaaaaa 0x10000000000000000 0 by kinformer",
		"pods: 100 objects over 3 ranges; fullest 0/3 with 100, mean 33.3, skew (max/mean) 3.00",
		"FNV-1a", "Shard by uid",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("by namespace: missing %q in:\n%s", want, got)
		}
	}

	out.Reset()
	if err := RunShards(t.Context(), Streams{Out: &out}, global, ShardsOptions{Split: 4, By: "uid"}, []string{"po"}); err != nil {
		t.Fatal(err)
	}
	got = out.String()
	counts := make([]int, 4)
	for _, uid := range uids {
		for r := range 4 {
			if shard.SplitPart(r, 4).Contains(shard.Hash(string(uid))) {
				counts[r]++
			}
		}
	}
	sp := spread{resource: "pods", counts: counts}
	if !strings.Contains(got, sp.String()+"\n") || strings.Contains(got, "FNV-1a") {
		t.Errorf("by uid: want %q and no namespace hint in:\n%s", sp.String(), got)
	}
	if sp.skew() >= 1.5 {
		t.Errorf("100 uids spread with skew %.2f over 4 ranges", sp.skew())
	}
}

func TestSpreadSkew(t *testing.T) {
	for _, tc := range []struct {
		counts []int
		want   float64
	}{{[]int{5, 5, 5}, 1}, {[]int{9, 0, 0}, 3}, {[]int{0, 0}, 0}, {[]int{3, 1}, 1.5}} {
		if got := (spread{counts: tc.counts}).skew(); got != tc.want {
			t.Errorf("skew(%v) = %v, want %v", tc.counts, got, tc.want)
		}
	}
}

// Where namespace sharding is offered, the help says it can be skewed and
// how to measure it; --shard's value is named plainly.
func TestShardHelpWarnsOfNamespaceSkew(t *testing.T) {
	var out bytes.Buffer
	if err := Execute(t.Context(), Streams{Out: &out, ErrOut: &out}, []string{"shards", "--help"}); err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{"--shard string", "FNV-1a keeps similar short names together (ns0 to ns99 all in 0/3)",
		"--by namespace keeps each namespace in one range", "look at the skew before sharding by namespace", "N up to 65536"} {
		if !strings.Contains(flat, want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}

// shards makes a source per hash range: none of them may log a line at
// the default level (it printed one per range on stderr, 15 for three
// resources split in five).
func TestShardsLogsNothingPerRange(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	global := fakeCluster(t, metadataList([]string{"a", "b"}, []types.UID{"u1", "u2"}))
	global.AllNamespaces = true
	var out bytes.Buffer
	if err := RunShards(t.Context(), Streams{Out: &out, ErrOut: &logs}, global, ShardsOptions{Split: 5, By: "uid"}, []string{"pods"}); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Errorf("shards --split 5 logged:\n%s", logs.String())
	}
}

// shards names a resource of a group as get, watch and stats do:
// deployments.apps, not deployments.
func TestShardsNamesResourcesAsGetDoes(t *testing.T) {
	global := fakeCluster(t, metadataList([]string{"a", "b"}, []types.UID{"u1", "u2"}))
	global.AllNamespaces = true
	var out bytes.Buffer
	if err := RunShards(t.Context(), Streams{Out: &out}, global, ShardsOptions{Split: 2, By: "uid"}, []string{"deploy"}); err != nil {
		t.Fatal(err)
	}
	want := "deployments.apps"
	if got := informerName(target{res: kube.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}}}); got != want {
		t.Fatalf("get, watch and stats name deployments %q, want %q", got, want)
	}
	flat := strings.Join(strings.Fields(out.String()), " ")
	for _, w := range []string{want + " 0/2 ", want + " 1/2 ", want + ": 2 objects over 2 ranges"} {
		if !strings.Contains(flat, w) {
			t.Errorf("missing %q in:\n%s", w, out.String())
		}
	}
}

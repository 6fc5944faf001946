package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

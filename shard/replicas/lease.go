package replicas

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What a replica's Lease carries besides the Lease fields themselves
// (holderIdentity, leaseDurationSeconds, renewTime).
const (
	// GroupLabel is set to the group's name on every Lease of the group.
	GroupLabel = "shard.kinformer.io/group"
	// RangesAnnotation lists the indexes of the ranges the replica claims
	// (owns, synced), comma-separated: "0,3,7".
	RangesAnnotation = "shard.kinformer.io/ranges"
	// SlotsAnnotation is the number of ranges the replica cuts the hash
	// space into; members that disagree ignore each other.
	SlotsAnnotation = "shard.kinformer.io/slots"
	// LeavingAnnotation, "true", says the replica is handing its ranges
	// over before it stops.
	LeavingAnnotation = "shard.kinformer.io/leaving"
)

// leaseName is the name of identity's Lease in group: a DNS subdomain.
func leaseName(group, identity string) string {
	var b strings.Builder
	b.WriteString(group)
	b.WriteByte('-')
	for _, c := range strings.ToLower(identity) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-.")
	if len(name) > 253 {
		name = strings.Trim(name[:253], "-.")
	}
	return name
}

// formatRanges renders slot indexes as RangesAnnotation holds them.
func formatRanges(slots []int) string {
	parts := make([]string, len(slots))
	for i, s := range slots {
		parts[i] = strconv.Itoa(s)
	}
	return strings.Join(parts, ",")
}

// parseRanges reads RangesAnnotation; indexes out of [0, n) are an error.
func parseRanges(text string, n int) ([]int, error) {
	if text == "" {
		return nil, nil
	}
	var out []int
	for part := range strings.SplitSeq(text, ",") {
		s, err := strconv.Atoi(part)
		if err != nil || s < 0 || s >= n {
			return nil, fmt.Errorf("range %q of %d", part, n)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// peer is what a replica knows of one Lease of its group.
type peer struct {
	identity string
	name     string // the Lease's
	rv       string // the Lease's resourceVersion
	slots    int
	claims   []int
	leaving  bool
	duration time.Duration
	// renew is the Lease's renewTime as written (by the peer's clock);
	// observed is when this replica saw it change (by its own clock).
	renew    string
	observed time.Time
	bad      string // why the Lease is ignored ("" if it is not)
}

// readLease reads a Lease of the group. prev is what was known of it
// before (nil if nothing); now is the reader's clock.
func readLease(l *coordinationv1.Lease, prev *peer, now time.Time) *peer {
	p := &peer{name: l.Name, rv: l.ResourceVersion}
	if l.Spec.HolderIdentity != nil {
		p.identity = *l.Spec.HolderIdentity
	}
	if l.Spec.LeaseDurationSeconds != nil {
		p.duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	if l.Spec.RenewTime != nil {
		p.renew = l.Spec.RenewTime.Format(time.RFC3339Nano)
	}
	p.leaving = l.Annotations[LeavingAnnotation] == "true"
	n, err := strconv.Atoi(l.Annotations[SlotsAnnotation])
	switch {
	case p.identity == "":
		p.bad = "no holderIdentity"
	case p.duration <= 0:
		p.bad = "no leaseDurationSeconds"
	case err != nil || n < 1:
		p.bad = fmt.Sprintf("annotation %s=%q", SlotsAnnotation, l.Annotations[SlotsAnnotation])
	}
	p.slots = n
	if p.bad == "" {
		if p.claims, err = parseRanges(l.Annotations[RangesAnnotation], n); err != nil {
			p.bad = fmt.Sprintf("annotation %s: %v", RangesAnnotation, err)
		}
	}
	switch {
	case prev != nil && prev.renew == p.renew:
		p.observed = prev.observed
	case l.Spec.RenewTime != nil && now.Sub(l.Spec.RenewTime.Time) > p.duration:
		// Seen for the first time (or changed) but already stale by our
		// clock: a dead replica's Lease, most likely. Trust its age rather
		// than granting it a fresh LeaseDuration.
		p.observed = l.Spec.RenewTime.Time
	default:
		p.observed = now
	}
	return p
}

// valid reports whether p's claims stand at now: it renewed within its
// LeaseDuration, as observed.
func (p *peer) valid(now time.Time) bool {
	return p.bad == "" && now.Sub(p.observed) < p.duration
}

// member reports whether p takes part in the split at now: it renewed
// within half its LeaseDuration and is not leaving.
func (p *peer) member(now time.Time) bool {
	return p.valid(now) && !p.leaving && now.Sub(p.observed) < p.duration/2
}

// claims reports whether p claims slot s.
func (p *peer) claimsSlot(s int) bool {
	_, ok := slices.BinarySearch(p.claims, s)
	return ok
}

// newLease is identity's Lease as it writes it.
func newLease(group, namespace, identity string, slots int, claims []int, leaving bool, duration time.Duration, now time.Time) *coordinationv1.Lease {
	secs := int32((duration + time.Second - 1) / time.Second)
	t := metav1.NewMicroTime(now)
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:      leaseName(group, identity),
			Namespace: namespace,
			Labels:    map[string]string{GroupLabel: group},
			Annotations: map[string]string{
				SlotsAnnotation:  strconv.Itoa(slots),
				RangesAnnotation: formatRanges(claims),
			},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       &identity,
			LeaseDurationSeconds: &secs,
			AcquireTime:          &t,
			RenewTime:            &t,
		},
	}
	if leaving {
		l.Annotations[LeavingAnnotation] = "true"
	}
	return l
}

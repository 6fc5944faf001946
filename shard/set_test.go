package shard_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kinformer/kinformer/shard"
)

const top = 0 // Range.End for 2^64

func mustSet(t testing.TB, f shard.Field, rs ...shard.Range) shard.Set {
	t.Helper()
	s, err := shard.NewSet(f, rs...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func configMap(ns string, uid types.UID) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x", UID: uid}}
}

// apimachineryMatches is the apiserver's decision: apimachinery's selector
// built from the same bounds, matched against the object.
func apimachineryMatches(t testing.TB, s shard.Set, obj *corev1.ConfigMap) bool {
	t.Helper()
	var reqs []sharding.ShardRangeRequirement
	for _, r := range s.Ranges() {
		start, end := fmt.Sprintf("0x%016x", r.Start), fmt.Sprintf("0x%016x", r.End)
		if r.End == 0 {
			end = "0x10000000000000000"
		}
		reqs = append(reqs, sharding.ShardRangeRequirement{Key: string(s.Field()), Start: start, End: end})
	}
	ok, err := sharding.NewSelector(reqs...).Matches(obj)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// Membership is apimachinery's for random objects and random sets of
// ranges, and at every range's boundaries: the hash itself as a start
// (in) and as an end (out).
func TestContainsAgreesWithApimachinery(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		obj := configMap(fmt.Sprintf("ns-%d", rng.IntN(50)), uuid.NewUUID())
		field := []shard.Field{shard.UID, shard.Namespace}[i%2]
		h := shard.HashOf(obj, field)
		var rs []shard.Range
		for range 1 + rng.IntN(3) {
			a, b := rng.Uint64(), rng.Uint64()
			if a > b {
				a, b = b, a
			}
			if a == b {
				b = top
			}
			rs = append(rs, shard.Range{Start: a, End: b})
		}
		sets := []shard.Set{mustSet(t, field, rs...), mustSet(t, field, shard.Range{Start: h, End: h + 1}),
			mustSet(t, field, shard.Range{Start: 0, End: h}), mustSet(t, field, shard.Range{Start: h, End: top})}
		if h < ^uint64(0) {
			sets = append(sets, mustSet(t, field, shard.Range{Start: h + 1, End: top}))
		}
		for _, s := range sets {
			if got, want := s.Contains(obj), apimachineryMatches(t, s, obj); got != want {
				t.Fatalf("%s: %s hash %016x: Contains %v, apimachinery %v", s, field, h, got, want)
			}
		}
	}
}

func TestContainsAtTheBoundariesOfARange(t *testing.T) {
	obj := configMap("shop", "0b5f4b5e-8a39-4bde-9d0f-2b1f0f0e7c11")
	h := shard.HashOf(obj, shard.UID)
	for _, tc := range []struct {
		name string
		r    shard.Range
		want bool
	}{
		{"starts at the hash", shard.Range{Start: h, End: h + 1}, true},
		{"ends at the hash", shard.Range{Start: 0, End: h}, false},
		{"ends just after", shard.Range{Start: 0, End: h + 1}, true},
		{"starts just after", shard.Range{Start: h + 1, End: top}, false},
		{"whole space", shard.Range{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustSet(t, shard.UID, tc.r)
			if got := s.Contains(obj); got != tc.want {
				t.Errorf("Contains = %v, want %v", got, tc.want)
			}
			if got := apimachineryMatches(t, s, obj); got != tc.want {
				t.Errorf("apimachinery says %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHashIsApimachinerysHashField(t *testing.T) {
	for _, v := range []string{"", "default", "kube-system", "0b5f4b5e-8a39-4bde-9d0f-2b1f0f0e7c11"} {
		if got, want := fmt.Sprintf("%016x", shard.Hash(v)), sharding.HashField(v); got != want {
			t.Errorf("Hash(%q) = %s, HashField %s", v, got, want)
		}
	}
}

func TestNewSetNormalizesRanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []shard.Range
		want []shard.Range
	}{
		{"one", []shard.Range{{Start: 5, End: 9}}, []shard.Range{{Start: 5, End: 9}}},
		{"sorted", []shard.Range{{Start: 20, End: 30}, {Start: 5, End: 9}}, []shard.Range{{Start: 5, End: 9}, {Start: 20, End: 30}}},
		{"touching merge", []shard.Range{{Start: 9, End: 12}, {Start: 5, End: 9}}, []shard.Range{{Start: 5, End: 12}}},
		{"overlapping merge", []shard.Range{{Start: 5, End: 10}, {Start: 7, End: 8}, {Start: 8, End: 15}}, []shard.Range{{Start: 5, End: 15}}},
		{"to the top absorbs", []shard.Range{{Start: 100, End: top}, {Start: 200, End: 300}}, []shard.Range{{Start: 100, End: top}}},
		{"split joins into the whole", shard.Split(3), []shard.Range{{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustSet(t, shard.UID, tc.in...)
			if !slices.Equal(got.Ranges(), tc.want) {
				t.Errorf("Ranges() = %v, want %v", got.Ranges(), tc.want)
			}
			if want := mustSet(t, shard.UID, tc.want...); got != want {
				t.Errorf("%v != %v: equal coverage must compare equal", got, want)
			}
		})
	}
}

func TestNewSetRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		f  shard.Field
		rs []shard.Range
	}{
		"unknown field":  {"object.metadata.name", []shard.Range{{}}},
		"no ranges":      {shard.UID, nil},
		"empty range":    {shard.UID, []shard.Range{{Start: 7, End: 7}}},
		"reversed range": {shard.UID, []shard.Range{{Start: 8, End: 7}}},
	} {
		if _, err := shard.NewSet(tc.f, tc.rs...); !errors.Is(err, shard.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

func TestZeroSetSelectsEverythingAndSendsNothing(t *testing.T) {
	var s shard.Set
	if !s.IsZero() || s.Selector() != "" || s.String() != "" || s.Ranges() != nil {
		t.Errorf("zero Set: IsZero %v, Selector %q, String %q, Ranges %v", s.IsZero(), s.Selector(), s.String(), s.Ranges())
	}
	if !s.Contains(configMap("a", "b")) {
		t.Error("zero Set does not contain an object")
	}
}

func TestSplitCoversTheSpaceOnceInNearlyEqualParts(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7, 16, 1000} {
		rs := shard.Split(n)
		if len(rs) != n || rs[0].Start != 0 || rs[n-1].End != top {
			t.Fatalf("Split(%d) = %v...", n, rs[:1])
		}
		var lo, hi uint64 = ^uint64(0), 0
		for i, r := range rs {
			if i > 0 && r.Start != rs[i-1].End {
				t.Fatalf("Split(%d): gap or overlap between %v and %v", n, rs[i-1], r)
			}
			size := r.End - r.Start // wraps to the right size for End 0
			lo, hi = min(lo, size), max(hi, size)
		}
		if n > 1 && hi-lo > 1 {
			t.Errorf("Split(%d): sizes from %d to %d", n, lo, hi)
		}
	}
}

// The wire syntax is the KEP's, as the field's documentation gives it.
func TestSelectorIsTheKEPSyntax(t *testing.T) {
	halves := shard.Split(2)
	for _, tc := range []struct {
		s    shard.Set
		want string
	}{
		{mustSet(t, shard.UID, halves[0]), "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"},
		{mustSet(t, shard.Namespace, halves[1]), "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')"},
		{mustSet(t, shard.UID, shard.Split(4)[0], shard.Split(4)[2]),
			"shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || shardRange(object.metadata.uid, '0x8000000000000000', '0xc000000000000000')"},
	} {
		if got := tc.s.Selector(); got != tc.want {
			t.Errorf("Selector() =\n%s\nwant\n%s", got, tc.want)
		}
	}
}

func TestParseSet(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want shard.Set
	}{
		{"", shard.Set{}},
		{"uid:0/2", mustSet(t, shard.UID, shard.Split(2)[0])},
		{"namespace:2/3", mustSet(t, shard.Namespace, shard.Split(3)[2])},
		{"uid:0x0000000000000000-0x4000000000000000,0xc000000000000000-0x10000000000000000",
			mustSet(t, shard.UID, shard.Range{End: 1 << 62}, shard.Range{Start: 3 << 62})},
		{"uid:1/4, 0x8000000000000000-0xc000000000000000", mustSet(t, shard.UID, shard.Range{Start: 1 << 62, End: 3 << 62})},
	} {
		got, err := shard.ParseSet(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSet(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"uid", "name:0/2", "uid:2/2", "uid:0/0", "uid:0x0-0x8000000000000000",
		"uid:0x8000000000000000-0x0000000000000000", "uid:0xABCDEF0000000000-0x10000000000000000", "uid:"} {
		if _, err := shard.ParseSet(bad); !errors.Is(err, shard.ErrInvalid) {
			t.Errorf("ParseSet(%q): err = %v, want ErrInvalid", bad, err)
		}
	}
}

// ParseSet never panics, fails only with ErrInvalid, allocates in
// proportion to the text's length at most (never to a number in it), and
// what it accepts renders back to the same Set.
func FuzzParseSetRoundTrips(f *testing.F) {
	for _, s := range []string{"uid:0/3", "namespace:0x0000000000000001-0x0000000000000002", "uid:1/2,0/4",
		"uid:3/10000000", "uid:0/9223372036854775807", "namespace:65535/65536", "uid:-1/2", "uid:0/0",
		"uid:0x0000000000000000-0x10000000000000000", "uid:0x10000000000000000-0x10000000000000000", ":", "uid:,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var s shard.Set
		var err error
		if n := allocatedBy(func() { s, err = shard.ParseSet(text) }); n > 16<<10+64*uint64(len(text)) {
			t.Fatalf("ParseSet(%q) allocated %d bytes", text, n)
		}
		if err != nil {
			if !errors.Is(err, shard.ErrInvalid) {
				t.Fatalf("ParseSet(%q): %v does not wrap ErrInvalid", text, err)
			}
			return
		}
		again, err := shard.ParseSet(s.String())
		if err != nil || again != s {
			t.Fatalf("%q -> %q -> %v, %v", text, s.String(), again, err)
		}
	})
}

func TestSplitPartIsRangeIOfSplit(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 1000, shard.MaxSplit} {
		rs := shard.Split(n)
		for _, i := range []int{0, 1, n / 2, n - 2, n - 1} {
			if i < 0 || i >= n {
				continue
			}
			if got := shard.SplitPart(i, n); got != rs[i] {
				t.Errorf("SplitPart(%d, %d) = %v, Split(%d)[%d] = %v", i, n, got, n, i, rs[i])
			}
		}
	}
	// The boundaries stay those of floor(i * 2^64 / n).
	if got, want := shard.SplitPart(1, 3), (shard.Range{Start: 0x5555555555555555, End: 0xaaaaaaaaaaaaaaaa}); got != want {
		t.Errorf("SplitPart(1, 3) = %v, want %v", got, want)
	}
}

func TestSplitPanicsBeyondMaxSplit(t *testing.T) {
	for _, f := range []func(){func() { shard.Split(shard.MaxSplit + 1) }, func() { shard.SplitPart(0, shard.MaxSplit+1) },
		func() { shard.SplitPart(3, 3) }, func() { shard.Split(0) }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}

func TestParseSetRefusesMoreThanMaxSplitRanges(t *testing.T) {
	text := fmt.Sprintf("uid:0/%d", shard.MaxSplit+1)
	_, err := shard.ParseSet(text)
	if !errors.Is(err, shard.ErrInvalid) || !strings.Contains(err.Error(), "at most 65536 ranges") {
		t.Errorf("ParseSet(%q): %v, want ErrInvalid naming the limit", text, err)
	}
	if _, err := shard.ParseSet(fmt.Sprintf("uid:%d/%d", shard.MaxSplit-1, shard.MaxSplit)); err != nil {
		t.Errorf("the last range of MaxSplit: %v", err)
	}
}

// allocatedBy returns the bytes f allocates, as the runtime counts them
// (other goroutines of this test binary are idle while it runs).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// "i/n" finds range i without building the other n-1, whatever n is: a
// number in the text never sizes an allocation, and never panics.
func TestParseSetAllocatesNothingProportionalToN(t *testing.T) {
	for _, text := range []string{"uid:3/10000000", "uid:3/65536", "namespace:65535/65536",
		"uid:0/9223372036854775807", "uid:9223372036854775806/9223372036854775807", "uid:0/99999999999999999999999"} {
		var err error
		_, _ = shard.ParseSet("uid:x/y") // fmt's first error warms its pools up
		if n := allocatedBy(func() { _, err = shard.ParseSet(text) }); n > 16<<10 {
			t.Errorf("ParseSet(%q) allocated %d bytes (err %v)", text, n, err)
		}
	}
}

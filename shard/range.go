package shard

import (
	"fmt"
	"math/bits"
	"strconv"

	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
)

// Field names the metadata field whose hash places an object in a shard:
// the field paths KEP-5866 supports.
type Field string

const (
	// UID shards by metadata.uid: objects spread evenly, whatever their
	// namespaces.
	UID Field = "object.metadata.uid"
	// Namespace shards by metadata.namespace: every object of a namespace
	// is in the same shard (all cluster-scoped objects too, their
	// namespace being ""). FNV-1a keeps similar short names together, so
	// the spread can be far from even (see the package documentation).
	Namespace Field = "object.metadata.namespace"
)

// valid reports whether the apiserver knows the field.
func (f Field) valid() bool { return f == UID || f == Namespace }

// short is the field's name in String and ParseSet.
func (f Field) short() string {
	switch f {
	case UID:
		return "uid"
	case Namespace:
		return "namespace"
	}
	return string(f)
}

// Object is what membership reads of an object; every Kubernetes object
// (metav1.Object) has both.
type Object interface {
	GetNamespace() string
	GetUID() types.UID
}

// Hash returns the 64-bit FNV-1a hash of value, the position KEP-5866
// gives an object whose sharding field holds value. It is apimachinery's
// sharding.HashField, read as a number.
func Hash(value string) uint64 {
	h, err := strconv.ParseUint(sharding.HashField(value), 16, 64)
	if err != nil { // HashField always returns 16 hex digits
		panic(fmt.Sprintf("shard: sharding.HashField(%q): %v", value, err))
	}
	return h
}

// HashOf returns the hash of obj's field f (its uid or its namespace).
func HashOf(obj Object, f Field) uint64 {
	if f == Namespace {
		return Hash(obj.GetNamespace())
	}
	return Hash(string(obj.GetUID()))
}

// Range is the hashes h with Start <= h < End. End 0 means 2^64, the top of
// the hash space (which does not fit in a uint64), so the zero Range is the
// whole space and Range{Start: 1 << 63} its upper half.
type Range struct {
	Start, End uint64
}

// Contains reports whether h is in r.
func (r Range) Contains(h uint64) bool {
	return h >= r.Start && (r.End == 0 || h < r.End)
}

// valid reports whether r holds at least one hash.
func (r Range) valid() bool { return r.End == 0 || r.Start < r.End }

// String renders r as KEP-5866 writes bounds: "0x…-0x…", 16 hex digits
// each, "0x10000000000000000" for 2^64.
func (r Range) String() string { return hexBound(r.Start, false) + "-" + hexBound(r.End, true) }

// hexBound renders a bound as the apiserver requires it: 0x and 16
// lowercase hex digits, or 0x10000000000000000 for an End of 2^64.
func hexBound(v uint64, isEnd bool) string {
	if isEnd && v == 0 {
		return "0x10000000000000000"
	}
	return fmt.Sprintf("0x%016x", v)
}

// MaxSplit is the largest number of equal ranges Split, SplitPart and
// ParseSet's "i/n" cut the hash space into. Each range of MaxSplit still
// holds 2^48 hashes, far more than a resource has objects; a larger n is
// a typing mistake, so it is refused rather than trusted (a replica group
// owning a range per watch, or a command line printing a line per range,
// would otherwise do work in proportion to it).
const MaxSplit = 1 << 16

// Split cuts the hash space into n ranges of equal size (to within one
// hash), in order: range i of n is the shard of replica i in a static
// n-way split, the same range SplitPart(i, n) returns. n must be in
// [1, MaxSplit]; Split panics otherwise.
func Split(n int) []Range {
	checkSplit(n)
	out := make([]Range, n)
	for i := range n {
		out[i] = Range{Start: boundary(i, n), End: boundary(i+1, n)}
	}
	return out
}

// SplitPart returns range i of Split(n), computed on its own: it costs
// the same for every n. It needs 1 <= n <= MaxSplit and 0 <= i < n, and
// panics otherwise.
func SplitPart(i, n int) Range {
	checkSplit(n)
	if i < 0 || i >= n {
		panic(fmt.Sprintf("shard: SplitPart(%d, %d) needs 0 <= i < n", i, n))
	}
	return Range{Start: boundary(i, n), End: boundary(i+1, n)}
}

func checkSplit(n int) {
	if n < 1 || n > MaxSplit {
		panic(fmt.Sprintf("shard: Split needs 1 <= n <= MaxSplit (%d), got %d", MaxSplit, n))
	}
}

// boundary returns floor(i * 2^64 / n) for 0 <= i <= n, with 2^64 as 0.
func boundary(i, n int) uint64 {
	if i == n {
		return 0
	}
	q, _ := bits.Div64(uint64(i), 0, uint64(n)) // (i << 64) / n; i < n, so no overflow
	return q
}

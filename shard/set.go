package shard

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/sharding"
)

// Set is a shard: one or more ranges of the hash of one field. It is a
// small comparable value, normalized by NewSet (ranges sorted, overlapping
// and touching ones merged), so two Sets are equal exactly when they
// select the same objects by the same field. The zero Set is no sharding
// at all: it selects every object and sends no selector.
type Set struct {
	field Field
	// ranges packs the normalized ranges, 16 bytes each (Start then End,
	// big-endian), so that the Set stays comparable.
	ranges string
}

// ErrInvalid is wrapped by the errors of NewSet and ParseSet.
var ErrInvalid = errors.New("invalid shard")

// NewSet returns the Set of the given ranges of field's hash. It needs at
// least one range, each holding at least one hash (Start < End, or End 0),
// and a field the apiserver knows (UID or Namespace).
func NewSet(field Field, ranges ...Range) (Set, error) {
	if !field.valid() {
		return Set{}, fmt.Errorf("%w: unknown field %q (want %q or %q)", ErrInvalid, field, UID, Namespace)
	}
	if len(ranges) == 0 {
		return Set{}, fmt.Errorf("%w: no ranges", ErrInvalid)
	}
	rs := slices.Clone(ranges)
	for _, r := range rs {
		if !r.valid() {
			return Set{}, fmt.Errorf("%w: empty range %s", ErrInvalid, r)
		}
	}
	slices.SortFunc(rs, func(a, b Range) int { return cmp.Compare(a.Start, b.Start) })
	merged := rs[:1]
	for _, r := range rs[1:] {
		last := &merged[len(merged)-1]
		if last.End == 0 || r.Start <= last.End { // overlaps or touches
			if last.End != 0 && (r.End == 0 || r.End > last.End) {
				last.End = r.End
			}
			continue
		}
		merged = append(merged, r)
	}
	b := make([]byte, 0, 16*len(merged))
	for _, r := range merged {
		b = binary.BigEndian.AppendUint64(b, r.Start)
		b = binary.BigEndian.AppendUint64(b, r.End)
	}
	return Set{field: field, ranges: string(b)}, nil
}

// IsZero reports whether s is the zero Set (no sharding).
func (s Set) IsZero() bool { return s.field == "" }

// Field returns the field s hashes ("" for the zero Set).
func (s Set) Field() Field { return s.field }

// Ranges returns s's normalized ranges, in order (nil for the zero Set).
func (s Set) Ranges() []Range {
	if s.IsZero() {
		return nil
	}
	out := make([]Range, len(s.ranges)/16)
	for i := range out {
		out[i] = s.rangeAt(i)
	}
	return out
}

func (s Set) rangeAt(i int) Range {
	b := s.ranges[16*i:]
	return Range{
		Start: uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 | uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7]),
		End:   uint64(b[8])<<56 | uint64(b[9])<<48 | uint64(b[10])<<40 | uint64(b[11])<<32 | uint64(b[12])<<24 | uint64(b[13])<<16 | uint64(b[14])<<8 | uint64(b[15]),
	}
}

// ContainsHash reports whether the hash h is in s. The zero Set contains
// every hash.
func (s Set) ContainsHash(h uint64) bool {
	if s.IsZero() {
		return true
	}
	for i := range len(s.ranges) / 16 {
		if s.rangeAt(i).Contains(h) {
			return true
		}
	}
	return false
}

// Contains reports whether obj is in s: whether the hash of its uid (or
// namespace) is in one of s's ranges. It is the apiserver's decision for
// the same selector. The zero Set contains every object.
func (s Set) Contains(obj Object) bool {
	if s.IsZero() {
		return true
	}
	return s.ContainsHash(HashOf(obj, s.field))
}

// Selector returns s in the wire syntax of metav1.ListOptions.ShardSelector
// (the query parameter shardSelector), as apimachinery's
// sharding.Selector renders it:
//
//	shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(...)
//
// It is "" for the zero Set.
func (s Set) Selector() string {
	if s.IsZero() {
		return ""
	}
	rs := s.Ranges()
	reqs := make([]sharding.ShardRangeRequirement, len(rs))
	for i, r := range rs {
		reqs[i] = sharding.ShardRangeRequirement{Key: string(s.field), Start: hexBound(r.Start, false), End: hexBound(r.End, true)}
	}
	return sharding.NewSelector(reqs...).String()
}

// String renders s in the form ParseSet reads: the field, a colon, and the
// ranges separated by commas ("uid:0x0000000000000000-0x8000000000000000").
// It is "" for the zero Set.
func (s Set) String() string {
	if s.IsZero() {
		return ""
	}
	var b strings.Builder
	b.WriteString(s.field.short())
	b.WriteByte(':')
	for i, r := range s.Ranges() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(r.String())
	}
	return b.String()
}

// ParseSet reads a Set as a command line gives it: a field ("uid" or
// "namespace"), a colon, then either "i/n", range i (from 0) of Split(n),
// or comma-separated ranges "0x…-0x…" in KEP-5866's notation (16 hex
// digits, "0x10000000000000000" for the end of the space; a list of "i/n"
// may be mixed in). n is at most MaxSplit. The empty string is the zero
// Set. Every error wraps ErrInvalid, and no number in text sizes an
// allocation: what ParseSet allocates grows with len(text) only.
func ParseSet(text string) (Set, error) {
	if text == "" {
		return Set{}, nil
	}
	name, list, ok := strings.Cut(text, ":")
	if !ok {
		return Set{}, fmt.Errorf("%w: %q: want FIELD:RANGES, as uid:0/3 or namespace:0x0000000000000000-0x8000000000000000", ErrInvalid, text)
	}
	var field Field
	switch name {
	case "uid":
		field = UID
	case "namespace":
		field = Namespace
	default:
		return Set{}, fmt.Errorf("%w: %q: unknown field %q (want uid or namespace)", ErrInvalid, text, name)
	}
	var ranges []Range
	for part := range strings.SplitSeq(list, ",") {
		r, err := parseRange(strings.TrimSpace(part))
		if err != nil {
			return Set{}, fmt.Errorf("%w: %q: %w", ErrInvalid, text, err)
		}
		ranges = append(ranges, r)
	}
	return NewSet(field, ranges...)
}

// parseRange reads "i/n" or "0x…-0x…".
func parseRange(s string) (Range, error) {
	if is, ns, ok := strings.Cut(s, "/"); ok {
		i, err1 := strconv.Atoi(is)
		n, err2 := strconv.Atoi(ns)
		if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
			return Range{}, fmt.Errorf("range %q: want i/n with 0 <= i < n", s)
		}
		if n > MaxSplit {
			return Range{}, fmt.Errorf("range %q: at most %d ranges (shard.MaxSplit), got %d", s, MaxSplit, n)
		}
		return SplitPart(i, n), nil
	}
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return Range{}, fmt.Errorf("range %q: want START-END or i/n", s)
	}
	start, err := parseBound(a, false)
	if err != nil {
		return Range{}, err
	}
	end, err := parseBound(b, true)
	if err != nil {
		return Range{}, err
	}
	return Range{Start: start, End: end}, nil
}

// parseBound reads one bound in the apiserver's notation.
func parseBound(s string, isEnd bool) (uint64, error) {
	if isEnd && s == "0x10000000000000000" {
		return 0, nil
	}
	hex, ok := strings.CutPrefix(s, "0x")
	if !ok || len(hex) != 16 || strings.ToLower(hex) != hex {
		return 0, fmt.Errorf("bound %q: want 0x and 16 lowercase hex digits", s)
	}
	v, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("bound %q: %w", s, err)
	}
	if isEnd && v == 0 { // Range.End 0 is 2^64; the text says so explicitly
		return 0, fmt.Errorf("end %q holds no hash (the top of the space is 0x10000000000000000)", s)
	}
	return v, nil
}

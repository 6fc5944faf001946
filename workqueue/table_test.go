package workqueue

import (
	"math/rand/v2"
	"testing"
)

// TestTableMatchesMap inserts and removes random keys, growing and
// shrinking the table through many sizes, and after every step checks every
// key of the universe against a Go map, and that every live slot is counted.
func TestTableMatchesMap(t *testing.T) {
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var tb table[int]
		tb.init()
		want := map[int]int32{} // key -> arena index
		const universe = 3 * tableShrinkMin
		target := 0
		for step := range 40_000 {
			if step%5_000 == 0 {
				target = rng.IntN(universe) // drift between sparse and dense
			}
			k := rng.IntN(universe)
			h := tb.hash(k)
			idx, ok := want[k]
			switch {
			case !ok && len(want) <= target:
				idx = tb.insert(k, h, stateReady, 0)
				want[k] = idx
			case ok && (len(want) > target || rng.IntN(2) == 0):
				tb.remove(idx, h)
				delete(want, k)
			}
			idx, ok = want[k]
			if got := tb.find(k, h); (got >= 0) != ok || (ok && got != idx) {
				t.Fatalf("seed %d step %d: find(%d) = %d, want %d (present %v)", seed, step, k, got, idx, ok)
			}
			if step%997 == 0 {
				checkTable(t, &tb, want, universe)
			}
		}
		checkTable(t, &tb, want, universe)
		for k, idx := range want {
			tb.remove(idx, tb.hash(k))
			delete(want, k)
		}
		checkTable(t, &tb, want, universe)
	}
}

func checkTable(t *testing.T, tb *table[int], want map[int]int32, universe int) {
	t.Helper()
	if tb.n != len(want) {
		t.Fatalf("n = %d, want %d", tb.n, len(want))
	}
	used := 0
	for _, s := range tb.slots {
		if s.idx != 0 {
			used++
			if tb.at(s.idx-1).state == stateFree {
				t.Fatalf("slot points at free entry %d", s.idx-1)
			}
		}
	}
	if used != len(want) {
		t.Fatalf("%d slots used for %d entries", used, len(want))
	}
	if len(tb.slots) > 0 && 4*tb.n > 3*len(tb.slots) {
		t.Fatalf("%d entries in %d slots: more than three quarters full", tb.n, len(tb.slots))
	}
	for k := range universe {
		idx, ok := want[k]
		got := tb.find(k, tb.hash(k))
		if ok && (got != idx || tb.at(got).item != k) {
			t.Fatalf("find(%d) = %d, want %d", k, got, idx)
		}
		if !ok && got >= 0 {
			t.Fatalf("find(%d) = %d, want absent", k, got)
		}
	}
}

func TestCyclicallyBetween(t *testing.T) {
	tests := []struct {
		i, k, j uint32
		want    bool
	}{
		{2, 3, 5, true}, {2, 5, 5, true}, {2, 2, 5, false}, {2, 6, 5, false},
		{6, 7, 1, true}, {6, 0, 1, true}, {6, 1, 1, true}, {6, 6, 1, false}, {6, 3, 1, false},
	}
	for _, tt := range tests {
		if got := cyclicallyBetween(tt.i, tt.k, tt.j); got != tt.want {
			t.Errorf("cyclicallyBetween(%d, %d, %d) = %v, want %v", tt.i, tt.k, tt.j, got, tt.want)
		}
	}
}

// TestTableWithCollidingHashes gives many items the same hash, or hashes
// equal in their low 32 bits (the slot's tag), so that probing must compare
// items and deleting must shift whole clusters.
func TestTableWithCollidingHashes(t *testing.T) {
	var tb table[int]
	tb.init()
	hash := func(k int) uint64 {
		switch k % 3 {
		case 0:
			return 42 // every third item: one hash
		case 1:
			return 42 | uint64(k)<<32 // same tag, different high bits
		}
		return uint64(k) * 0x9e3779b97f4a7c15
	}
	want := map[int]int32{}
	for k := range 300 {
		want[k] = tb.insert(k, hash(k), stateReady, 0)
	}
	for k := 0; k < 300; k += 2 {
		tb.remove(want[k], hash(k))
		delete(want, k)
	}
	for k := range 300 {
		idx, ok := want[k]
		if got := tb.find(k, hash(k)); (got >= 0) != ok || (ok && got != idx) {
			t.Fatalf("find(%d) = %d, want %d (present %v)", k, got, idx, ok)
		}
	}
}

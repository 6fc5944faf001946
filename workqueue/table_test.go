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
				tb.remove(idx)
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
			tb.remove(idx)
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
		if s != 0 {
			used++
		}
	}
	if used != len(want) {
		t.Fatalf("%d slots used for %d entries", used, len(want))
	}
	if len(tb.slots) > 0 && 2*tb.n > len(tb.slots) {
		t.Fatalf("%d entries in %d slots: more than half full", tb.n, len(tb.slots))
	}
	for k := range universe {
		idx, ok := want[k]
		got := tb.find(k, tb.hash(k))
		if ok && (got != idx || tb.entries[got].item != k) {
			t.Fatalf("find(%d) = %d, want %d", k, got, idx)
		}
		if !ok && got >= 0 {
			t.Fatalf("find(%d) = %d, want absent", k, got)
		}
	}
}

func TestCyclicallyBetween(t *testing.T) {
	tests := []struct {
		i, k, j int
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

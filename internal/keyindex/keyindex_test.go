package keyindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestIndexFindsEveryKeyAndNothingElse(t *testing.T) {
	for _, tt := range []struct {
		name string
		keys []string
	}{
		{"empty", nil},
		{"one", []string{"a"}},
		{"sorted", []string{"a", "ns/a", "ns/b", "other/a"}},
		{"unsorted", []string{"ns/b", "a", "other/a", "ns/a"}},
		{"empty key", []string{"b", "", "a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x, ok := New(tt.keys)
			if !ok {
				t.Fatal("distinct keys refused")
			}
			for i, key := range tt.keys {
				if got := x.Find(key); got != i {
					t.Errorf("Find(%q) = %d, want %d", key, got, i)
				}
			}
			for _, key := range []string{"missing", "ns/", "ns/c", "zz"} {
				if got := x.Find(key); got != -1 {
					t.Errorf("Find(%q) = %d, want -1", key, got)
				}
			}
		})
	}
}

func TestNewRefusesDuplicateKeys(t *testing.T) {
	for _, keys := range [][]string{
		{"a", "a"},
		{"a", "b", "a"},
		{"b", "a", "c", "a"},
		{"", ""},
	} {
		if _, ok := New(keys); ok {
			t.Errorf("New(%q) accepted a duplicate", keys)
		}
	}
}

func TestZeroIndexFindsNothing(t *testing.T) {
	var x Index
	if got := x.Find(""); got != -1 {
		t.Fatalf("Find on the zero Index = %d", got)
	}
}

// TestIndexMatchesAMapOverRandomLists builds indexes of random lists, some
// sorted, some with duplicates, large enough to wrap the hash table's
// probes, and checks every answer against a map.
func TestIndexMatchesAMapOverRandomLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		n := rng.IntN(3000)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("ns-%d/pod-%d", rng.IntN(50), rng.IntN(4*n+1))
		}
		if round%3 == 0 {
			slices.Sort(keys)
		}
		pos := map[string]int{}
		distinct := true
		for i, key := range keys {
			if _, dup := pos[key]; dup {
				distinct = false
			}
			pos[key] = i
		}
		x, ok := New(keys)
		if ok != distinct {
			t.Fatalf("round %d: New ok = %v, keys distinct = %v", round, ok, distinct)
		}
		if !ok {
			continue
		}
		for key, i := range pos {
			if got := x.Find(key); got != i {
				t.Fatalf("round %d: Find(%q) = %d, want %d", round, key, got, i)
			}
		}
		for range 100 {
			key := fmt.Sprintf("ns-%d/pod-%d", rng.IntN(60), rng.IntN(5*n+1))
			want, in := pos[key]
			if !in {
				want = -1
			}
			if got := x.Find(key); got != want {
				t.Fatalf("round %d: Find(%q) = %d, want %d", round, key, got, want)
			}
		}
	}
}

// BenchmarkNew100k indexes the keys of a first list of 100,000 pods,
// unsorted (the hash table) and sorted (a scan).
func BenchmarkNew100k(b *testing.B) {
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/app-%d-%06x-%d", i%100, i%97, uint32(i)*2654435761>>8, i)
	}
	b.Run("unsorted", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := New(keys); !ok {
				b.Fatal("refused")
			}
		}
	})
	sorted := slices.Sorted(slices.Values(keys))
	b.Run("sorted", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := New(sorted); !ok {
				b.Fatal("refused")
			}
		}
	})
}

package rmap

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// checkRmap compares m with the model want: every key of want (and a few
// absent ones) reads back right, len agrees, all yields want exactly, and
// the array is within its bounds of fill: at most 3/4 used, and no more
// than 8 slots per entry unless a reserve (of reserved, the largest since
// the map was last empty) asked for room.
func checkRmap(t *testing.T, m *Map[int], want map[string]int, absent []string, reserved int) {
	t.Helper()
	for k, v := range want {
		if got, ok := m.Get(k); !ok || got != v {
			t.Fatalf("get(%q) = %d, %v; want %d", k, got, ok, v)
		}
	}
	for _, k := range absent {
		if _, in := want[k]; in {
			continue
		}
		if got, ok := m.Get(k); ok {
			t.Fatalf("get(%q) = %d for an absent key", k, got)
		}
	}
	if m.Len() != len(want) {
		t.Fatalf("len = %d, want %d", m.Len(), len(want))
	}
	if got := maps.Collect(m.All()); !maps.Equal(got, want) {
		t.Fatalf("all = %v, want %v", got, want)
	}
	tbl := m.slots.Load()
	if tbl == nil {
		if len(want) > 0 {
			t.Fatalf("no slots for %d entries", len(want))
		}
		return
	}
	if m.used*4 > len(tbl.slots)*3 || m.used < m.n {
		t.Fatalf("%d of %d slots used, %d entries: out of bounds", m.used, len(tbl.slots), m.n)
	}
	if len(tbl.slots) > max(minSlots, 8*m.n, 4*reserved) {
		t.Fatalf("%d entries in %d slots (%d reserved): not shrunk", m.n, len(tbl.slots), reserved)
	}
}

// rmapOps applies ops, read from a random source, to a Map and a Go map
// side by side, checking after each.
func rmapOps(t *testing.T, next func(n int) int, steps int) {
	var m Map[int]
	want := map[string]int{}
	key := func() string { return "k" + strconv.Itoa(next(40)) }
	keys := make([]string, 40)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	keys = append(keys, "") // the empty key is a key like any other
	reserved := 0
	for step := range steps {
		switch op := next(10); {
		case op < 5:
			k := key()
			if next(20) == 0 {
				k = ""
			}
			m.Put(k, step)
			want[k] = step
		case op < 9:
			k := key()
			_, had := want[k]
			if got := m.Del(k); got != had {
				t.Fatalf("step %d: del(%q) = %v, want %v", step, k, got, had)
			}
			delete(want, k)
			if had && len(want) == 0 {
				reserved = 0 // emptied: the slots are gone
			}
		default:
			r := next(64)
			m.Reserve(r)
			reserved = max(reserved, r)
		}
		checkRmap(t, &m, want, keys, reserved)
	}
}

func TestRmapMatchesAMap(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		rmapOps(t, rng.IntN, 3000)
	}
}

func TestRmapGrowsAndShrinks(t *testing.T) {
	var m Map[int]
	want := map[string]int{}
	for i := range 10_000 {
		k := fmt.Sprintf("ns-%d/pod-%d", i%7, i)
		m.Put(k, i)
		want[k] = i
	}
	checkRmap(t, &m, want, []string{"nope"}, 0)
	if got := len(m.slots.Load().slots); got > 4*len(want) {
		t.Fatalf("%d slots for %d entries", got, len(want))
	}
	for k := range want {
		if len(want) == 3 {
			break
		}
		m.Del(k)
		delete(want, k)
	}
	checkRmap(t, &m, want, nil, 0)
	if got := len(m.slots.Load().slots); got > 16 {
		t.Fatalf("%d slots left for 3 entries", got)
	}
	m.Reserve(1000)
	checkRmap(t, &m, want, nil, 1000)
	for k := range want {
		m.Del(k)
	}
	checkRmap(t, &m, map[string]int{}, []string{"ns-0/pod-0"}, 0)
	if m.slots.Load() != nil {
		t.Fatal("emptied map kept its slots")
	}
}

// Readers with no lock, while one writer adds, replaces, removes and so
// resizes: a read never returns another key's value, nor a value older
// than one the writer had stored before the read began, and a key that is
// never removed is always found. Run with -race.
func TestRmapReadersDuringWrites(t *testing.T) {
	type val struct {
		key     string
		version int64
	}
	var m Map[*val]
	const stable, churn = 50, 500
	for i := range stable {
		k := "stable-" + strconv.Itoa(i)
		m.Put(k, &val{k, 0})
	}
	var (
		stop    atomic.Bool
		written atomic.Int64 // version of the last put to stable-0
		wg      sync.WaitGroup
		errs    = make(chan error, 8)
	)
	for r := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for !stop.Load() {
				floor := written.Load()
				if v, ok := m.Get("stable-0"); !ok || v.key != "stable-0" || v.version < floor {
					errs <- fmt.Errorf("stable-0: %+v, %v after version %d was written", v, ok, floor)
					return
				}
				k := "stable-" + strconv.Itoa(rng.IntN(stable))
				if v, ok := m.Get(k); !ok || v.key != k {
					errs <- fmt.Errorf("get(%q) = %+v, %v", k, v, ok)
					return
				}
				k = "churn-" + strconv.Itoa(rng.IntN(churn))
				if v, ok := m.Get(k); ok && v.key != k {
					errs <- fmt.Errorf("get(%q) = %+v", k, v)
					return
				}
			}
		})
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range int64(100_000) {
		k := "churn-" + strconv.Itoa(rng.IntN(churn))
		if rng.IntN(3) == 0 {
			m.Del(k)
		} else {
			m.Put(k, &val{k, i})
		}
		if i%100 == 0 {
			m.Put("stable-0", &val{"stable-0", i})
			written.Store(i)
		}
		if i%20_000 == 0 { // empty the churn keys: shrink, then grow again
			for j := range churn {
				m.Del("churn-" + strconv.Itoa(j))
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func FuzzRmap(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("put put put del del reserve put"))
	f.Fuzz(func(t *testing.T, data []byte) {
		i := 0
		next := func(n int) int {
			if i >= len(data) {
				return 0
			}
			b := int(data[i])
			i++
			return b % n
		}
		rmapOps(t, next, len(data)/3)
	})
}

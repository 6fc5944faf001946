package workqueue

import (
	"slices"
	"testing"
)

// drain pops every item of r.
func drain(r *ring[int]) []int {
	var out []int
	for r.len() > 0 {
		out = append(out, r.pop())
	}
	return out
}

func TestRingKeepsOrderAcrossGrowAndWrap(t *testing.T) {
	var r ring[int]
	var want []int
	next := 0
	// Interleave pushes and pops so the head wraps while the ring grows.
	for round := range 200 {
		for range round%7 + 3 {
			r.push(next)
			want = append(want, next)
			next++
		}
		for range round % 5 {
			if got := r.pop(); got != want[0] {
				t.Fatalf("pop = %d, want %d", got, want[0])
			}
			want = want[1:]
		}
	}
	if got := drain(&r); !slices.Equal(got, want) {
		t.Fatalf("drained %v, want %v", got, want)
	}
}

func TestRingShrinksAfterBurst(t *testing.T) {
	var r ring[int]
	for i := range 100 * shrinkMin {
		r.push(i)
	}
	peak := len(r.buf)
	for i := range 100*shrinkMin - 10 {
		if got := r.pop(); got != i {
			t.Fatalf("pop = %d, want %d", got, i)
		}
	}
	if len(r.buf) >= peak {
		t.Fatalf("capacity %d after draining, still %d", len(r.buf), peak)
	}
	// It keeps working with a few items: the rest of the memory goes
	// within a few hundred thousand operations (see hiwater).
	next := 100 * shrinkMin
	want := []int{}
	for i := 100*shrinkMin - 10; i < 100*shrinkMin; i++ {
		want = append(want, i)
	}
	for range 6 * hiwaterDecay {
		r.push(next)
		want = append(want, next)
		next++
		if got := r.pop(); got != want[0] {
			t.Fatalf("pop = %d, want %d", got, want[0])
		}
		want = want[1:]
	}
	if len(r.buf) > shrinkMin {
		t.Fatalf("capacity %d after the burst and %d more operations, want at most %d", len(r.buf), 6*hiwaterDecay, shrinkMin)
	}
	if got := drain(&r); !slices.Equal(got, want) {
		t.Fatalf("last items %v, want %v", got, want)
	}
}

// TestRingKeepsMemoryWhileRefilling fills and empties a ring again and
// again, as a queue swept by an informer's resync is: it must not free and
// reallocate its buffer every round.
func TestRingKeepsMemoryWhileRefilling(t *testing.T) {
	var r ring[int]
	var buf *int
	for round := range 50 {
		for i := range 10 * shrinkMin {
			r.push(i)
		}
		if round == 0 {
			buf = &r.buf[0]
		} else if &r.buf[0] != buf {
			t.Fatalf("round %d: the buffer was reallocated", round)
		}
		for r.len() > 0 {
			r.pop()
		}
	}
}

func TestRingRemove(t *testing.T) {
	tests := []struct {
		name   string
		items  []int
		target int
		found  bool
		want   []int
	}{
		{"Middle", []int{1, 2, 3, 4}, 3, true, []int{1, 2, 4}},
		{"First", []int{1, 2, 3}, 1, true, []int{2, 3}},
		{"Last", []int{1, 2, 3}, 3, true, []int{1, 2}},
		{"OnlyFirstOfDuplicates", []int{5, 1, 5}, 5, true, []int{1, 5}},
		{"Absent", []int{1, 2}, 9, false, []int{1, 2}},
		{"Empty", nil, 1, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ring[int]
			// Start mid-buffer so removal crosses the wrap point.
			for range 14 {
				r.push(0)
			}
			for range 14 {
				r.pop()
			}
			for _, v := range tt.items {
				r.push(v)
			}
			if got := remove(&r, tt.target); got != tt.found {
				t.Fatalf("remove = %v, want %v", got, tt.found)
			}
			if got := drain(&r); !slices.Equal(got, tt.want) {
				t.Fatalf("left %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRingPositionsSurviveResize keeps the position of every pushed item
// and overwrites some in place while the ring grows, wraps and shrinks:
// set must always reach the item it was given.
func TestRingPositionsSurviveResize(t *testing.T) {
	var r ring[int]
	pos := map[int]uint32{} // item -> position, for items in the ring
	var order []int         // items in the ring, oldest first
	next := 0
	for round := range 300 + 4*hiwaterDecay/20 {
		pushes, pops := 40, 10 // grow
		switch {
		case round >= 300:
			pushes, pops = 20, 20 // steady and small, so the ring shrinks
		case round >= 150:
			pushes, pops = 10, 40 // drain
		}
		for range pushes {
			pos[next] = r.push(next)
			order = append(order, next)
			next++
		}
		// Overwrite every third item with its negation, by position.
		for i, item := range order {
			if i%3 == 0 && item >= 0 {
				r.set(pos[item], -item-1)
				delete(pos, item)
				order[i] = -item - 1
			}
		}
		for range min(pops, len(order)) {
			if got := r.pop(); got != order[0] {
				t.Fatalf("round %d: pop = %d, want %d", round, got, order[0])
			}
			delete(pos, order[0])
			order = order[1:]
		}
	}
	if got := drain(&r); !slices.Equal(got, order) {
		t.Fatalf("drained %v, want %v", got, order)
	}
	if len(r.buf) > shrinkMin {
		t.Fatalf("capacity %d after draining, want at most %d", len(r.buf), shrinkMin)
	}
}

package replicas

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kinformer/kinformer/shard"
)

func counts(owner []string) map[string]int {
	c := map[string]int{}
	for _, o := range owner {
		c[o]++
	}
	return c
}

func moved(a, b []string) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

func TestAssignIsBalancedAndIgnoresOrderAndDuplicates(t *testing.T) {
	for _, slots := range []int{1, 7, 16, 64} {
		for n := 1; n <= 9; n++ {
			ms := names("replica", n)
			owner := Assign(ms, slots)
			if len(owner) != slots {
				t.Fatalf("%d slots, %d members: %d owners", slots, n, len(owner))
			}
			for m, c := range counts(owner) {
				if !slices.Contains(ms, m) || c < slots/n || c > (slots+n-1)/n {
					t.Errorf("%d slots, %d members: %q owns %d", slots, n, m, c)
				}
			}
			shuffled := slices.Clone(ms)
			rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if again := Assign(append(shuffled, ms[0]), slots); !slices.Equal(again, owner) {
				t.Errorf("%d slots, %d members: order or a duplicate changed the split", slots, n)
			}
		}
	}
	if Assign(nil, 16) != nil {
		t.Error("no members: want nil")
	}
}

// A join or a leave moves few ranges more than it must: a joiner must
// take floor(slots/(n+1)) ranges at least, a leaver's ranges must all
// move. Over many random member sets, the excess is measured and bounded
// (16 slots, up to 8 members: on average about one range, at worst six).
func TestAssignMovesLittle(t *testing.T) {
	const slots, trials = 16, 300
	rng := rand.New(rand.NewPCG(3, 4))
	var total, worst int
	var changes int
	for trial := range trials {
		for n := 1; n <= 8; n++ {
			ms := names(fmt.Sprintf("t%d-%x", trial, rng.Uint32()), n)
			before := Assign(ms, slots)
			joined := Assign(append(slices.Clone(ms), fmt.Sprintf("new-%d", trial)), slots)
			excess := moved(before, joined) - slots/(n+1)
			if n > 1 {
				left := Assign(ms[1:], slots)
				excess2 := moved(before, left) - counts(before)[ms[0]]
				total += excess2
				worst = max(worst, excess2)
				changes++
				if excess2 < 0 {
					t.Fatalf("leave moved less than the leaver's ranges")
				}
			}
			if excess < 0 {
				t.Fatalf("join moved less than the joiner's share")
			}
			total += excess
			worst = max(worst, excess)
			changes++
		}
	}
	avg := float64(total) / float64(changes)
	t.Logf("ranges moved beyond the minimum: %.2f on average, %d at worst, over %d joins and leaves", avg, worst, changes)
	if avg > 1.5 || worst > 8 {
		t.Errorf("excess moves: %.2f on average, %d at worst", avg, worst)
	}
}

func TestSlotOfFindsTheRangeOfAHash(t *testing.T) {
	slots := shard.Split(7)
	for i, r := range slots {
		for _, h := range []uint64{r.Start, r.Start + 1, r.End - 1} {
			if got := slotOf(h, slots); got != i {
				t.Errorf("slotOf(%x) = %d, want %d", h, got, i)
			}
		}
	}
}

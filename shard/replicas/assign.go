package replicas

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"slices"

	"github.com/kinformer/kinformer/shard"
)

// Assign splits slots ranges of the hash space (shard.Split(slots))
// between members, and returns the owner of each: Assign(m, s)[i] owns
// shard.Split(s)[i]. It is a pure function of the member set (order and
// duplicates do not matter), so every member computes the same split from
// the same Leases.
//
// Each member gets slots/len(members) ranges, or one more (the remainder
// going to the members that rank them highest). Ranges go by rendezvous
// hashing with a cap: every (member, range) pair has a pseudo-random
// score, and pairs are taken in descending score order, the range going to
// the pair's member unless it already has an owner or the member is full.
// A join therefore mostly takes ranges from everyone, a leave mostly hands
// the leaver's ranges around, and the rest stays put: a join or leave
// moves close to the minimum (see TestAssignMovesLittle for the measured
// excess). It returns nil when there are no members.
func Assign(members []string, slots int) []string {
	ms := slices.Clone(members)
	slices.Sort(ms)
	ms = slices.Compact(ms)
	if len(ms) == 0 || slots < 1 {
		return nil
	}
	type pair struct {
		member, slot int
		score        uint64
	}
	pairs := make([]pair, 0, len(ms)*slots)
	for m, id := range ms {
		for s := range slots {
			pairs = append(pairs, pair{m, s, score(id, s)})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := cmp.Compare(a.member, b.member); c != 0 {
			return c
		}
		return cmp.Compare(a.slot, b.slot)
	})
	floor, extra := slots/len(ms), slots%len(ms)
	owner := make([]string, slots)
	count := make([]int, len(ms))
	for _, p := range pairs {
		if owner[p.slot] != "" {
			continue
		}
		switch c := count[p.member]; {
		case c < floor:
		case c == floor && extra > 0:
			extra--
		default:
			continue
		}
		owner[p.slot] = ms[p.member]
		count[p.member]++
	}
	return owner
}

// score is the rendezvous score of member for slot: FNV-1a of both,
// mixed by a 64-bit finalizer so that similar names score independently.
func score(member string, slot int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(member))
	h.Write(binary.BigEndian.AppendUint32(nil, uint32(slot)))
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// slotOf returns the index of the range of shard.Split(slots) that holds
// the hash h.
func slotOf(h uint64, slots []shard.Range) int {
	i, _ := slices.BinarySearchFunc(slots, h, func(r shard.Range, h uint64) int {
		if r.Contains(h) {
			return 0
		}
		if h < r.Start {
			return 1
		}
		return -1
	})
	return i
}

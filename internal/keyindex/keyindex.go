// Package keyindex finds a key's position in a list of keys without
// building a Go map. A DeltaFIFO holds its first list (often 100,000
// objects or more) as parallel slices rather than a map; this index is
// what lets it refuse a list that names a key twice and answer a read of
// one key, at a fraction of a map's cost. BenchmarkDeltaFIFOFirstList100k
// (package cache) and the initial-sync scenario of bench/ pay for it.
package keyindex

import (
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
)

// Index finds keys in the list it was built from. The zero Index finds
// nothing. An Index is read-only once built and safe for concurrent reads.
//
// A list sorted in strictly increasing order (as a kube-apiserver lists)
// is searched in place, with nothing allocated. Any other list gets an
// open-addressing hash table of positions, four bytes per slot, at most
// half full.
type Index struct {
	keys []string
	// slots is nil for a sorted list. Otherwise slots[h] is 0 when empty,
	// else holds a key: 1 + its position in the low posBits bits, and the
	// top bits of its hash in the others (its tag), which spare most
	// probes a look at another key. A key is in the first slot from
	// hash(key) on, wrapping around, that holds it.
	slots   []uint32
	posBits int
	seed    maphash.Seed
}

// maxKeys is the longest list New indexes: positions are stored plus one
// in a uint32.
const maxKeys = math.MaxUint32 - 1

// New indexes keys, which must not change while the Index is used. It
// returns false, and no index, when a key appears more than once (or the
// list is too long to index, over 4 billion keys).
func New(keys []string) (Index, bool) {
	x := Index{keys: keys}
	if sortedDistinct(keys) {
		return x, true
	}
	if len(keys) > maxKeys {
		return Index{}, false
	}
	size := 16
	for size < 2*len(keys) {
		size *= 2
	}
	x.slots = make([]uint32, size)
	x.posBits = bits.Len(uint(len(keys)))
	x.seed = maphash.MakeSeed()
	mask := uint64(size - 1)
	for i, key := range keys {
		hash := maphash.String(x.seed, key)
		tag := x.tag(hash)
		for h := hash & mask; ; h = (h + 1) & mask {
			s := x.slots[h]
			if s == 0 {
				x.slots[h] = tag | uint32(i+1)
				break
			}
			if s&^x.posMask() == tag && keys[s&x.posMask()-1] == key {
				return Index{}, false
			}
		}
	}
	return x, true
}

// tag is the slot bits above the position taken from hash: its top bits
// (none when positions use all 32).
func (x *Index) tag(hash uint64) uint32 {
	return uint32(hash>>(32+x.posBits)) << x.posBits
}

func (x *Index) posMask() uint32 { return 1<<x.posBits - 1 }

// sortedDistinct reports whether keys are in strictly increasing order,
// which proves them distinct with one comparison per key.
func sortedDistinct(keys []string) bool {
	for i := 1; i < len(keys); i++ {
		if keys[i-1] >= keys[i] {
			return false
		}
	}
	return true
}

// Find returns the position of key in the list, or -1 if it is not there.
func (x Index) Find(key string) int {
	if x.slots == nil {
		if i, ok := slices.BinarySearch(x.keys, key); ok {
			return i
		}
		return -1
	}
	mask := uint64(len(x.slots) - 1)
	hash := maphash.String(x.seed, key)
	tag := x.tag(hash)
	for h := hash & mask; ; h = (h + 1) & mask {
		s := x.slots[h]
		if s == 0 {
			return -1
		}
		if p := s & x.posMask(); s&^x.posMask() == tag && x.keys[p-1] == key {
			return int(p - 1)
		}
	}
}

// Package rmap holds Map, a string-keyed hash map for one writer and any
// number of lock-free readers.
//
// It is a speed trick and lives here for that reason: the cache stores its
// objects in Maps so that point reads (Lister.Get, Reader.GetByKey) take no
// lock at all. What pays for it is the lister-reads scenario of bench/
// (`cd bench && go run ./cmd/bench -run lister-reads`: 8 readers and a
// writer; 4.8x client-go's reads/s in bench/README.md) and, in cache,
// BenchmarkIndexerGetByNamespaceNameParallel100k.
package rmap

import (
	"hash/maphash"
	"iter"
	"sync/atomic"
)

// Map is a hash map from strings to V for one writer and any number of
// readers: Get takes no lock and writes no shared memory, so readers on
// many cores do not slow each other down (a sync.RWMutex's read lock
// writes a shared counter, whose cache line then moves between cores on
// every read).
//
// Writes (Put, Del, Reserve) must be serialized by the caller; reads may
// run at any time. A read that overlaps a write sees the map before or
// after it; a read that starts after a write has returned sees it.
//
// Layout: open addressing with linear probing over a power-of-two array
// of pointers to immutable entries. A write stores a new entry pointer
// atomically (so a value of any type V changes in one step); a removal
// stores the map's tombstone; growing, shrinking or clearing tombstones
// builds a new array and publishes it atomically, leaving the old one,
// unchanged, to readers still in it. The array holds at most 3/4 of its
// slots in use (entries and tombstones) and is rebuilt smaller once under
// 1/8 of them hold entries, so it never keeps the memory of a peak.
//
// The zero Map is empty and ready to use; it must not be copied after
// first use.
type Map[V any] struct {
	slots atomic.Pointer[table[V]] // nil while empty
	tomb  entry[V]                 // its address marks a removed entry
	// Writer only:
	n    int // entries
	used int // entries and tombstones in slots
}

// table is one array of a Map, never resized once published.
type table[V any] struct {
	mask  uint64 // len(slots)-1
	slots []atomic.Pointer[entry[V]]
}

// entry is one key and value; entries are never modified once stored.
type entry[V any] struct {
	key string
	val V
}

// seed seeds every Map's hash; it is random per process.
var seed = maphash.MakeSeed()

// minSlots is the smallest array a Map allocates.
const minSlots = 4

// Get returns the value stored under key. It is safe to call at any time.
func (m *Map[V]) Get(key string) (val V, ok bool) {
	t := m.slots.Load()
	if t == nil {
		return val, false
	}
	for i := maphash.String(seed, key) & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			return val, false
		}
		if e != &m.tomb && e.key == key {
			return e.val, true
		}
	}
}

// Len returns the number of entries. Writer, or readers excluded from
// writing by the caller's lock.
func (m *Map[V]) Len() int { return m.n }

// Put stores val under key. Writer only.
func (m *Map[V]) Put(key string, val V) {
	t := m.slots.Load()
	if t == nil || (m.used+1)*4 > len(t.slots)*3 {
		t = m.rebuild(m.n + 1)
	}
	free := -1
	i := maphash.String(seed, key) & t.mask
	for ; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			break
		}
		if e == &m.tomb {
			if free < 0 {
				free = int(i)
			}
			continue
		}
		if e.key == key {
			t.slots[i].Store(&entry[V]{key: key, val: val})
			return
		}
	}
	if free >= 0 {
		i = uint64(free) // reuse a tombstone: used is unchanged
	} else {
		m.used++
	}
	t.slots[i].Store(&entry[V]{key: key, val: val})
	m.n++
}

// Del removes what is stored under key and reports whether there was
// anything. Writer only.
func (m *Map[V]) Del(key string) bool {
	t := m.slots.Load()
	if t == nil {
		return false
	}
	for i := maphash.String(seed, key) & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			return false
		}
		if e != &m.tomb && e.key == key {
			t.slots[i].Store(&m.tomb)
			m.n--
			if m.n == 0 {
				m.slots.Store(nil)
				m.used = 0
			} else if len(t.slots) > minSlots && m.n*8 < len(t.slots) {
				m.rebuild(m.n)
			}
			return true
		}
	}
}

// Reserve sizes the array for n entries, so that putting up to n of them
// does not rebuild it. Writer only.
func (m *Map[V]) Reserve(n int) {
	if t := m.slots.Load(); t == nil || n*4 > len(t.slots)*3 {
		m.rebuild(max(n, m.n))
	}
}

// rebuild publishes a new array sized for n entries (at most half full),
// holding the current entries and no tombstones, and returns it.
func (m *Map[V]) rebuild(n int) *table[V] {
	size := minSlots
	for size < 2*n {
		size *= 2
	}
	nt := &table[V]{mask: uint64(size - 1), slots: make([]atomic.Pointer[entry[V]], size)}
	if t := m.slots.Load(); t != nil {
		for i := range t.slots {
			e := t.slots[i].Load()
			if e == nil || e == &m.tomb {
				continue
			}
			j := maphash.String(seed, e.key) & nt.mask
			for nt.slots[j].Load() != nil {
				j = (j + 1) & nt.mask
			}
			nt.slots[j].Store(e)
		}
	}
	m.used = m.n
	m.slots.Store(nt)
	return nt
}

// All yields every key and value, in no particular order. The caller must
// keep writers out while it runs.
func (m *Map[V]) All() iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		t := m.slots.Load()
		if t == nil {
			return
		}
		for i := range t.slots {
			e := t.slots[i].Load()
			if e == nil || e == &m.tomb {
				continue
			}
			if !yield(e.key, e.val) {
				return
			}
		}
	}
}

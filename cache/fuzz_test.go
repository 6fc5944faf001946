package cache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func FuzzSplitMetaNamespaceKey(f *testing.F) {
	for _, seed := range []string{"", "a", "ns/a", "/a", "a/", "/", "a/b/c", "ns//a", "ü/ß"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, key string) {
		ns, name, err := SplitMetaNamespaceKey(key)
		if err != nil {
			if !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("Split(%q) error %v does not match ErrInvalidKey", key, err)
			}
			return
		}
		// A key that splits is exactly what MetaNamespaceKey gives back.
		again, err := MetaNamespaceKey(newObj(ns, name, ""))
		if err != nil || again != key {
			t.Fatalf("Split(%q) = %q, %q; MetaNamespaceKey gives %q, %v", key, ns, name, again, err)
		}
		if name == "" || strings.Contains(name, "/") || strings.Contains(ns, "/") {
			t.Fatalf("Split(%q) = %q, %q: bad parts", key, ns, name)
		}
	})
}

// byteSource turns fuzz input into a rand.Source: one input byte per draw,
// spread over 64 bits, wrapping around at the end.
type byteSource struct {
	b []byte
	i int
}

func (s *byteSource) Uint64() uint64 {
	if len(s.b) == 0 {
		return 0
	}
	v := uint64(s.b[s.i%len(s.b)]) + uint64(s.i/len(s.b))
	s.i++
	return v * 0x9E3779B97F4A7C15
}

// FuzzDeltaFIFO drives the model comparison of the randomized test with
// fuzz input, on a queue free to take its bulk path and on one kept on its
// general path: every step's invariants (queue order, deltas per key, no
// duplicate deletes, HasSynced, reads that change nothing, indexer and
// index contents) must hold.
func FuzzDeltaFIFO(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte("relist, then pop while writing"))
	f.Add([]byte{255, 0, 255, 0, 128, 64, 32, 16, 8, 4, 2, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		err := runTwice(func() *rand.Rand { return rand.New(&byteSource{b: data}) }, func(p *pipeline) error {
			if data[0]%2 == 0 {
				if err := p.relist(); err != nil {
					return err
				}
			}
			for i := range min(4*len(data), 2000) {
				if err := p.step(); err != nil {
					return fmt.Errorf("step %d: %w", i, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzIndexer applies operations decoded from fuzz input to an Indexer and
// to a map, checking objects and index contents after each: adds and
// updates that change, add and remove index values, deletes, replaces,
// writes an index function rejects, and an index added once data exists.
func FuzzIndexer(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5})
	f.Add([]byte{4, 0, 0, 7, 1, 15, 2, 3, 3, 9, 9})
	f.Add([]byte("index me, then index me again"))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx := NewIndexer(IndexerOptions[*obj]{Indexers: Indexers[*obj]{NamespaceIndex: MetaNamespaceIndexFunc[*obj]}})
		want := map[string]*obj{}
		rv := 0
		mk := func(b byte) *obj {
			rv++
			var tags []string
			for i, tag := range []string{"x", "y", "z"} {
				if b&(1<<(i+3)) != 0 {
					tags = append(tags, tag)
				}
			}
			return newObj(modelNamespaces[int(b)%len(modelNamespaces)], fmt.Sprint(b%7), fmt.Sprint(rv), tags...)
		}
		for i := 0; i+1 < len(data); i += 2 {
			op, arg := data[i]%6, data[i+1]
			o := mk(arg)
			key, _ := MetaNamespaceKey(o)
			switch op {
			case 0, 1:
				if err := idx.Update(o); err != nil {
					t.Fatal(err)
				}
				want[key] = o
			case 2:
				if err := idx.Delete(o); err != nil {
					t.Fatal(err)
				}
				delete(want, key)
			case 3:
				list := []*obj{o, mk(arg / 3), mk(arg / 5)}
				if err := idx.Replace(list); err != nil {
					t.Fatal(err)
				}
				clear(want)
				for _, l := range list {
					k, _ := MetaNamespaceKey(l)
					want[k] = l
				}
			case 4:
				// Rejected by the tag index; stored if it is not there yet.
				o.tags = append(o.tags, "bad")
				err := idx.Update(o)
				if _, tagged := idx.GetIndexers()["tag"]; !tagged {
					if err != nil {
						t.Fatal(err)
					}
					want[key] = o
				} else if !errors.Is(err, ErrIndexFunc) || !errors.Is(err, errBadTag) {
					t.Fatalf("Update with a failing index function: %v", err)
				}
			case 5:
				_, had := idx.GetIndexers()["tag"]
				hasBad := false
				for _, w := range want {
					hasBad = hasBad || slices.Contains(w.tags, "bad")
				}
				err := idx.AddIndexers(Indexers[*obj]{"tag": tagIndex})
				switch {
				case had && !errors.Is(err, ErrIndexExists),
					!had && hasBad && !errors.Is(err, errBadTag),
					!had && !hasBad && err != nil:
					t.Fatalf("AddIndexers (had %v, bad data %v): %v", had, hasBad, err)
				}
			}
			if err := checkIndexer(idx, want); err != nil {
				t.Fatalf("op %d (%d, %d): %v", i/2, op, arg, err)
			}
		}
	})
}

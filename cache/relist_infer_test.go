package cache

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"testing"
)

// listCounting is KnownObjects that counts its ListKeys calls.
type listCounting struct {
	*Indexer[*obj]
	lists int
}

func (l *listCounting) ListKeys() []string { l.lists++; return l.Indexer.ListKeys() }

// relistWhilePopping fills a DeltaFIFO over known with a, b and c, queues
// popped for a, and relists the listed keys' objects while the Pop of a
// runs (before or after it applied popped to known, as applyFirst says).
// It returns the keys deleted with their state unknown.
func relistWhilePopping(t *testing.T, popped Delta[*obj], applyFirst bool, listed ...string) (deleted []string, lists int) {
	t.Helper()
	idx := NewIndexer(IndexerOptions[*obj]{})
	known := &listCounting{Indexer: idx}
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{KnownObjects: known})
	objs := []*obj{newObj("ns", "a", "1"), newObj("ns", "b", "1"), newObj("ns", "c", "1")}
	if err := f.Replace(objs, "1"); err != nil {
		t.Fatal(err)
	}
	for range objs {
		popOne(t, f, idx)
	}
	switch popped.Type {
	case Deleted:
		err := f.Delete(popped.Object)
		if err != nil {
			t.Fatal(err)
		}
	default:
		if err := f.Update(popped.Object); err != nil {
			t.Fatal(err)
		}
	}
	apply := func(d Delta[*obj]) {
		if d.Type == Deleted {
			_ = idx.Delete(d.Object)
		} else {
			_ = idx.Update(d.Object)
		}
	}
	_, err := f.Pop(context.Background(), func(_ string, ds Deltas[*obj], _ bool) error {
		if applyFirst {
			for _, d := range ds {
				apply(d)
			}
		}
		s, ok := f.BeginRelist()
		if !ok {
			t.Fatal("no relist session")
		}
		var items []*obj
		for _, name := range listed {
			items = append(items, newObj("ns", name, "1"))
		}
		if err := s.Apply(items); err != nil {
			t.Fatal(err)
		}
		known.lists = 0
		if err := s.Finish("2"); err != nil {
			t.Fatal(err)
		}
		lists = known.lists
		if !applyFirst {
			for _, d := range ds {
				apply(d)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for f.queuedLocked() > 0 {
		_, err := f.Pop(context.Background(), func(k string, ds Deltas[*obj], _ bool) error {
			for _, d := range ds {
				if d.Type == Deleted && d.StateUnknown {
					deleted = append(deleted, k)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(deleted)
	return deleted, lists
}

// A relist that lists every known key infers no deletion and, while the
// key being processed is not being deleted, finds that out without
// listing the known keys; one that misses a key deletes it, whether the
// key being processed was applied yet or not, and whatever that key's
// deltas are.
func TestRelistFinishInfersDeletionsWhileAKeyIsProcessed(t *testing.T) {
	update := Delta[*obj]{Type: Updated, Object: newObj("ns", "a", "2")}
	add := Delta[*obj]{Type: Updated, Object: newObj("ns", "d", "2")} // a key not known yet
	del := Delta[*obj]{Type: Deleted, Object: newObj("ns", "a", "1")}
	for _, tc := range []struct {
		name        string
		popped      Delta[*obj]
		applyFirst  bool
		listed      []string
		wantDeleted []string
		wantLists   int
	}{
		{"all listed, update in flight", update, false, []string{"a", "b", "c"}, nil, 0},
		{"all listed, update applied", update, true, []string{"a", "b", "c"}, nil, 0},
		{"all listed, add in flight", add, false, []string{"a", "b", "c", "d"}, nil, 0},
		{"all listed, add applied", add, true, []string{"a", "b", "c", "d"}, nil, 0},
		{"c missing, update in flight", update, false, []string{"a", "b"}, []string{"ns/c"}, 1},
		{"c missing, add applied", add, true, []string{"a", "b", "d"}, []string{"ns/c"}, 1},
		{"c missing, add in flight", add, false, []string{"a", "b", "d"}, []string{"ns/c"}, 1},
		{"all listed, delete in flight", del, false, []string{"a", "b", "c"}, nil, 1},
		{"c missing, delete applied", del, true, []string{"b"}, []string{"ns/c"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deleted, lists := relistWhilePopping(t, tc.popped, tc.applyFirst, tc.listed...)
			if !slices.Equal(deleted, tc.wantDeleted) {
				t.Errorf("deleted %v, want %v", deleted, tc.wantDeleted)
			}
			if lists != tc.wantLists {
				t.Errorf("Finish listed the known keys %d times, want %d", lists, tc.wantLists)
			}
		})
	}
}

// A relist that ends before its first item (an attempt to list that
// failed) leaves no table of the cache's size behind.
func TestRelistAbortedBeforeItsFirstItemAllocatesNoListedSet(t *testing.T) {
	idx := NewIndexer(IndexerOptions[*obj]{})
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{KnownObjects: idx})
	objs := make([]*obj, 10_000)
	for i := range objs {
		objs[i] = newObj("ns", "o"+strconv.Itoa(i), "1")
	}
	if err := idx.Replace(objs); err != nil {
		t.Fatal(err)
	}
	if err := f.Replace(objs, "1"); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		s, ok := f.BeginRelist()
		if !ok {
			t.Fatal("no relist session")
		}
		s.Abort()
	}
	runtime.ReadMemStats(&after)
	if b := after.TotalAlloc - before.TotalAlloc; b > 10<<10 {
		t.Errorf("10 relists aborted at once allocated %d bytes, want under 10 KB (no set of 10,000 keys)", b)
	}
}

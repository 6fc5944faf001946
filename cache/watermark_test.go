package cache

import (
	"context"
	"errors"
	"testing"
)

// popOne pops one key, applying it to known when known is not nil.
func popOne(t *testing.T, f *DeltaFIFO[*obj], known *Indexer[*obj]) string {
	t.Helper()
	var key string
	_, err := f.Pop(context.Background(), func(k string, ds Deltas[*obj], _ bool) error {
		key = k
		for _, d := range ds {
			if known == nil {
				continue
			}
			if d.Type == Deleted {
				_ = known.Delete(d.Object)
			} else {
				_ = known.Update(d.Object)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// The watermark is the version of the newest write whose entries, and all
// before them, are processed: a key updated twice while another waits
// reaches the later version only once the other is processed too.
func TestDeltaFIFOReachesAVersionOnceEverythingBeforeItIsProcessed(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
	for _, o := range []*obj{newObj("ns", "a", "5"), newObj("ns", "b", "7"), newObj("ns", "a", "9")} {
		if err := f.Update(o); err != nil {
			t.Fatal(err)
		}
	}
	if w := f.Written(); w != (Mark{Seq: 2, ResourceVersion: "9"}) {
		t.Fatalf("Written = %+v, want {2 9}", w)
	}
	if r := f.Reached(); r != (Mark{}) {
		t.Fatalf("Reached = %+v before any pop", r)
	}
	changed := f.ReachedChanged()
	popOne(t, f, nil) // a@5, a@9: b@7 still waits
	select {
	case <-changed:
	default:
		t.Fatal("ReachedChanged not closed by a pop")
	}
	if r := f.Reached(); r != (Mark{Seq: 1, ResourceVersion: "5"}) {
		t.Fatalf("Reached = %+v after a's entry, want {1 5}: b@7 is not processed", r)
	}
	popOne(t, f, nil)
	if r, w := f.Reached(), f.Written(); r != w || r.ResourceVersion != "9" {
		t.Fatalf("Reached = %+v, Written = %+v after draining, want both at 9", r, w)
	}
}

// A bookmark on an idle queue is reached at once; one behind queued
// entries waits for them. Writes the queue skips still carry their
// version; pages of a relist carry none until Finish, whose version waits
// for the inferred deletions.
func TestDeltaFIFOMarksBookmarksSkippedWritesAndRelists(t *testing.T) {
	known := NewIndexer(IndexerOptions[*obj]{})
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{
		KnownObjects: known,
		Transform: func(o *obj) (*obj, error) {
			if o.name == "bad" {
				return nil, errors.New("no")
			}
			return o, nil
		},
	})
	if err := f.Replace([]*obj{newObj("ns", "a", "1"), newObj("ns", "b", "1")}, "10"); err != nil {
		t.Fatal(err)
	}
	f.Bookmark("11")
	if r := f.Reached(); r.ResourceVersion != "" {
		t.Fatalf("Reached %+v before the list is processed", r)
	}
	popOne(t, f, known)
	popOne(t, f, known)
	if r := f.Reached(); r.ResourceVersion != "11" {
		t.Fatalf("Reached %+v, want the bookmark's 11 once the list is processed", r)
	}
	f.Bookmark("12")
	if r := f.Reached(); r.ResourceVersion != "12" {
		t.Fatalf("a bookmark on an idle queue: Reached %+v, want 12", r)
	}
	if err := f.Add(newObj("ns", "bad", "13")); err == nil {
		t.Fatal("Add of an object the transform refuses succeeded")
	}
	if r := f.Reached(); r.ResourceVersion != "13" {
		t.Fatalf("a skipped write: Reached %+v, want its 13", r)
	}

	s, ok := f.BeginRelist()
	if !ok {
		t.Fatal("no relist session after a write")
	}
	if err := s.Apply([]*obj{newObj("ns", "a", "20")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(newObj("ns", "b", "21")); err != nil {
		t.Fatal(err)
	}
	popOne(t, f, known)
	popOne(t, f, known)
	if r := f.Reached(); r.ResourceVersion != "13" {
		t.Fatalf("mid-relist: Reached %+v, want 13: a list is at no version before it ends", r)
	}
	if err := f.Add(newObj("ns", "c", "1")); err != nil { // known, not listed: deleted at Finish
		t.Fatal(err)
	}
	popOne(t, f, known)
	if err := s.Finish("22"); err != nil {
		t.Fatal(err)
	}
	if r := f.Reached(); r.ResourceVersion == "22" {
		t.Fatalf("Reached %+v before the inferred deletion is processed", r)
	}
	popOne(t, f, known)
	if r := f.Reached(); r.ResourceVersion != "22" || known.Len() != 1 {
		t.Fatalf("Reached %+v with %d cached, want 22 with a alone", r, known.Len())
	}
}

// An entry put back with ErrRequeue holds the watermark until it is
// processed, wherever it waits in the queue.
func TestDeltaFIFORequeuedEntryHoldsTheWatermark(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
	for _, o := range []*obj{newObj("ns", "a", "1"), newObj("ns", "b", "2")} {
		if err := f.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	_, err := f.Pop(context.Background(), func(string, Deltas[*obj], bool) error { return ErrRequeue })
	if !errors.Is(err, ErrRequeue) {
		t.Fatal(err)
	}
	if got := popOne(t, f, nil); got != "ns/b" {
		t.Fatalf("popped %s, want ns/b", got)
	}
	if r := f.Reached(); r.ResourceVersion != "" {
		t.Fatalf("Reached %+v while a@1 waits at the back", r)
	}
	popOne(t, f, nil)
	if r := f.Reached(); r.ResourceVersion != "2" {
		t.Fatalf("Reached %+v, want 2", r)
	}
}

// A closed queue ignores bookmarks.
func TestDeltaFIFOClosedIgnoresBookmarks(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
	f.Close()
	f.Bookmark("3")
	if w := f.Written(); w.ResourceVersion != "" {
		t.Fatalf("Written %+v after a bookmark on a closed queue", w)
	}
}

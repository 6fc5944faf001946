package cache

import (
	"errors"
	"slices"
	"testing"
)

// A StoreWriter keeps a plain store at a known version: every write,
// list and bookmark moves it; a relist is applied as it arrives and
// deletes what it did not name at its end.
func TestStoreWriterKeepsAStoreAtAVersionAndRelistsInPlace(t *testing.T) {
	idx := NewIndexer(IndexerOptions[*obj]{})
	w := NewStoreWriter(StoreWriterOptions[*obj]{Store: idx})
	if _, ok := w.BeginRelist(); ok {
		t.Fatal("a relist session before the first write: the first list is a Replace")
	}
	if err := w.Replace([]*obj{newObj("ns", "a", "1"), newObj("ns", "b", "1"), newObj("ns", "c", "1")}, "5"); err != nil {
		t.Fatal(err)
	}
	if err := w.Update(newObj("ns", "a", "6")); err != nil {
		t.Fatal(err)
	}
	w.Bookmark("7")
	if rv := w.ResourceVersion(); rv != "7" {
		t.Fatalf("ResourceVersion %q, want 7", rv)
	}

	s, ok := w.BeginRelist()
	if !ok {
		t.Fatal("no relist session after a write")
	}
	if _, again := w.BeginRelist(); again {
		t.Fatal("a second session while one is open")
	}
	var nilObj *obj
	err := s.Apply([]*obj{newObj("ns", "a", "8"), nilObj, newObj("ns", "d", "8")})
	var se *SkippedError
	if !errors.As(err, &se) || len(se.Errs) != 1 || !errors.Is(err, ErrInvalidObject) {
		t.Fatalf("Apply with a nil item: %v, want one skipped", err)
	}
	if got, _, _ := idx.GetByKey("ns/a"); got.rv != "8" {
		t.Fatalf("a listed object is not stored as it arrives: a@%s", got.rv)
	}
	if _, ok, _ := idx.GetByKey("ns/b"); !ok {
		t.Fatal("an object not listed yet left before the relist's end")
	}
	if err := s.Delete(newObj("ns", "d", "8")); err != nil {
		t.Fatal(err)
	}
	if rv := w.ResourceVersion(); rv != "7" {
		t.Fatalf("mid-relist ResourceVersion %q, want 7", rv)
	}
	if err := s.Finish("9"); err != nil {
		t.Fatal(err)
	}
	if keys := idx.ListKeys(); !slices.Equal(keys, []string{"ns/a"}) {
		t.Fatalf("after the relist: %v, want [ns/a]", keys)
	}
	if rv := w.ResourceVersion(); rv != "9" {
		t.Fatalf("ResourceVersion %q, want the relist's 9", rv)
	}
	if err := s.Apply(nil); !errors.Is(err, ErrRelistEnded) {
		t.Fatalf("Apply after Finish: %v", err)
	}

	s, _ = w.BeginRelist()
	if err := s.Apply([]*obj{newObj("ns", "e", "10")}); err != nil {
		t.Fatal(err)
	}
	s.Abort()
	if keys := idx.ListKeys(); len(keys) != 2 || w.ResourceVersion() != "9" {
		t.Fatalf("after an aborted relist: %v at %q, want a and e at 9", keys, w.ResourceVersion())
	}
	if _, ok := w.BeginRelist(); !ok {
		t.Fatal("no session after an aborted one")
	}
}

package cache

import (
	"errors"
	"slices"
	"testing"
)

// A join reads as one Indexer holding every part's objects would, and
// sees the set of parts of the moment it is read.
func TestJoinReadersReadsAsOneCache(t *testing.T) {
	a := newTagIndexer(t, newObj("ns", "a", "1", "x"), newObj("other", "b", "1", "y"))
	b := newTagIndexer(t, newObj("ns", "c", "1", "x", "z"))
	whole := newTagIndexer(t, newObj("ns", "a", "1", "x"), newObj("other", "b", "1", "y"), newObj("ns", "c", "1", "x", "z"))
	parts := []Reader[*obj]{a.Reader(), b.Reader()}
	j := JoinReaders(func() []Reader[*obj] { return parts })

	if j.Len() != whole.Len() {
		t.Errorf("Len %d, want %d", j.Len(), whole.Len())
	}
	if got, want := sorted(names(j.List())), sorted(names(whole.List())); !slices.Equal(got, want) {
		t.Errorf("List %v, want %v", got, want)
	}
	if got, want := sorted(j.ListKeys()), sorted(whole.ListKeys()); !slices.Equal(got, want) {
		t.Errorf("ListKeys %v, want %v", got, want)
	}
	for _, key := range []string{"ns/a", "other/b", "ns/c", "ns/nope"} {
		_, ok, err := j.GetByKey(key)
		_, want, _ := whole.GetByKey(key)
		if err != nil || ok != want {
			t.Errorf("GetByKey(%q) = %v, %v; want %v", key, ok, err, want)
		}
	}
	if o, ok := j.GetByNamespaceName("ns", "c"); !ok || o.name != "c" {
		t.Errorf("GetByNamespaceName(ns, c) = %v, %v", o, ok)
	}
	if _, ok, err := j.Get(newObj("other", "b", "9")); !ok || err != nil {
		t.Errorf("Get(other/b) = %v, %v", ok, err)
	}
	for _, v := range []string{"x", "y", "z", "none"} {
		got, err := j.ByIndex("tag", v)
		want, _ := whole.ByIndex("tag", v)
		if err != nil || !slices.Equal(sorted(names(got)), sorted(names(want))) {
			t.Errorf("ByIndex(tag, %s) = %v, %v; want %v", v, names(got), err, names(want))
		}
		keys, err := j.IndexKeys("tag", v)
		wantKeys, _ := whole.IndexKeys("tag", v)
		if err != nil || !slices.Equal(sorted(keys), sorted(wantKeys)) {
			t.Errorf("IndexKeys(tag, %s) = %v, %v; want %v", v, keys, err, wantKeys)
		}
	}
	if got, want := sorted(j.ListIndexFuncValues("tag")), sorted(whole.ListIndexFuncValues("tag")); !slices.Equal(got, want) {
		t.Errorf("ListIndexFuncValues %v, want %v (each value once)", got, want)
	}
	idx, err := j.Index("tag", newObj("", "", "", "x"))
	if err != nil || len(idx) != 2 {
		t.Errorf("Index(tag, x) = %v, %v; want a and c", names(idx), err)
	}
	if _, err := j.ByIndex("nosuch", "v"); !errors.Is(err, ErrIndexNotFound) {
		t.Errorf("ByIndex of an unknown index: %v, want ErrIndexNotFound", err)
	}
	if len(j.GetIndexers()) != 2 {
		t.Errorf("GetIndexers has %d functions, want the parts' 2", len(j.GetIndexers()))
	}

	// The set of parts is read on every call: dropping a part drops its
	// objects from the next read.
	parts = parts[:1]
	if _, ok := j.GetByNamespaceName("ns", "c"); ok || j.Len() != 2 {
		t.Errorf("after dropping a part: ns/c found %v, Len %d; want absent, 2", ok, j.Len())
	}
	parts = nil
	if j.Len() != 0 || j.List() != nil || len(j.GetIndexers()) != 0 {
		t.Errorf("a join of no parts reads as empty: Len %d, List %v", j.Len(), j.List())
	}
}

package cache

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func newTagIndexer(t *testing.T, objs ...*obj) *Indexer[*obj] {
	t.Helper()
	idx := NewIndexer(IndexerOptions[*obj]{Indexers: Indexers[*obj]{
		"tag":          tagIndex,
		NamespaceIndex: MetaNamespaceIndexFunc[*obj],
	}})
	for _, o := range objs {
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return idx
}

func byIndex(t *testing.T, idx *Indexer[*obj], name, value string) []string {
	t.Helper()
	objs, err := idx.ByIndex(name, value)
	if err != nil {
		t.Fatal(err)
	}
	return names(objs)
}

func indexKeys(t *testing.T, idx *Indexer[*obj], name, value string) []string {
	t.Helper()
	keys, err := idx.IndexKeys(name, value)
	if err != nil {
		t.Fatal(err)
	}
	return sorted(keys)
}

func TestStoreBasicOperations(t *testing.T) {
	s := NewIndexer(IndexerOptions[*obj]{})
	a1, b1, a2 := newObj("ns", "a", "1"), newObj("ns", "b", "1"), newObj("ns", "a", "2")
	for _, o := range []*obj{a1, b1} {
		if err := s.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Update(a2); err != nil {
		t.Fatal(err)
	}
	if got, want := names(s.List()), []string{"ns/a@2", "ns/b@1"}; !slices.Equal(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	if got, want := sorted(s.ListKeys()), []string{"ns/a", "ns/b"}; !slices.Equal(got, want) {
		t.Fatalf("ListKeys = %v, want %v", got, want)
	}
	if got, ok, err := s.Get(newObj("ns", "a", "")); err != nil || !ok || got != a2 {
		t.Fatalf("Get = %v, %v, %v; want a@2", got, ok, err)
	}
	if err := s.Delete(newObj("ns", "a", "9")); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.GetByKey("ns/a"); ok {
		t.Fatal("ns/a still present after Delete")
	}
	if err := s.Delete(newObj("ns", "zzz", "")); err != nil {
		t.Fatalf("Delete of absent key: %v", err)
	}
	if err := s.Replace([]*obj{newObj("x", "c", "3")}); err != nil {
		t.Fatal(err)
	}
	if got, want := names(s.List()), []string{"x/c@3"}; !slices.Equal(got, want) {
		t.Fatalf("after Replace List = %v, want %v", got, want)
	}
	if _, err := s.ByIndex("tag", "x"); !errors.Is(err, ErrIndexNotFound) {
		t.Fatalf("ByIndex on a store without indexes: err = %v, want ErrIndexNotFound", err)
	}
}

func TestIndexerMaintainsIndexesThroughUpdates(t *testing.T) {
	tests := []struct {
		name   string
		before []string // tags of ns/a before the update
		after  []string // tags after
	}{
		{"value unchanged", []string{"x"}, []string{"x"}},
		{"value changed", []string{"x"}, []string{"y"}},
		{"value added", []string{"x"}, []string{"x", "y"}},
		{"value removed", []string{"x", "y"}, []string{"y"}},
		{"all values removed", []string{"x", "y"}, nil},
		{"values from none", nil, []string{"x", "y"}},
		{"duplicate values", []string{"x", "x"}, []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := newTagIndexer(t, newObj("ns", "a", "1", tt.before...), newObj("ns", "b", "1", "x"))
			if err := idx.Update(newObj("ns", "a", "2", tt.after...)); err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{"x", "y"} {
				var want []string
				if slices.Contains(tt.after, v) {
					want = append(want, "ns/a")
				}
				if v == "x" {
					want = append(want, "ns/b")
				}
				if got := indexKeys(t, idx, "tag", v); !slices.Equal(got, want) {
					t.Errorf("IndexKeys(tag, %s) = %v, want %v", v, got, want)
				}
			}
			wantValues := []string{"x"}
			if slices.Contains(tt.after, "y") {
				wantValues = append(wantValues, "y")
			}
			if got := sorted(idx.ListIndexFuncValues("tag")); !slices.Equal(got, wantValues) {
				t.Errorf("ListIndexFuncValues = %v, want %v", got, wantValues)
			}
		})
	}
}

func TestIndexerLookups(t *testing.T) {
	idx := newTagIndexer(t,
		newObj("ns1", "a", "1", "x", "y"),
		newObj("ns1", "b", "1", "y"),
		newObj("ns2", "c", "1", "z"),
	)
	got, err := idx.Index("tag", newObj("", "probe", "", "x", "y"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ns1/a@1", "ns1/b@1"}; !slices.Equal(names(got), want) {
		t.Errorf("Index(x,y) = %v, want %v (each object once)", names(got), want)
	}
	if got, want := byIndex(t, idx, NamespaceIndex, "ns1"), []string{"ns1/a@1", "ns1/b@1"}; !slices.Equal(got, want) {
		t.Errorf("ByIndex(namespace, ns1) = %v, want %v", got, want)
	}
	if got := byIndex(t, idx, "tag", "nope"); len(got) != 0 {
		t.Errorf("ByIndex of absent value = %v, want empty", got)
	}
	if got, want := sorted(idx.ListIndexFuncValues(NamespaceIndex)), []string{"ns1", "ns2"}; !slices.Equal(got, want) {
		t.Errorf("ListIndexFuncValues(namespace) = %v, want %v", got, want)
	}
	if got := idx.ListIndexFuncValues("nope"); got != nil {
		t.Errorf("ListIndexFuncValues of unknown index = %v, want nil", got)
	}
	for _, call := range []func() error{
		func() error { _, err := idx.ByIndex("nope", "x"); return err },
		func() error { _, err := idx.IndexKeys("nope", "x"); return err },
		func() error { _, err := idx.Index("nope", newObj("", "a", "")); return err },
	} {
		if err := call(); !errors.Is(err, ErrIndexNotFound) {
			t.Errorf("look-up on unknown index: err = %v, want ErrIndexNotFound", err)
		}
	}
	if got := idx.GetIndexers(); len(got) != 2 || got["tag"] == nil || got[NamespaceIndex] == nil {
		t.Errorf("GetIndexers = %v, want tag and namespace", got)
	}
}

func TestIndexerDeleteAndReplaceMaintainIndexes(t *testing.T) {
	idx := newTagIndexer(t, newObj("ns", "a", "1", "x"), newObj("ns", "b", "1", "x", "y"))
	if err := idx.Delete(newObj("ns", "b", "")); err != nil {
		t.Fatal(err)
	}
	if got, want := indexKeys(t, idx, "tag", "x"), []string{"ns/a"}; !slices.Equal(got, want) {
		t.Errorf("after delete IndexKeys(x) = %v, want %v", got, want)
	}
	if got := idx.ListIndexFuncValues("tag"); !slices.Equal(got, []string{"x"}) {
		t.Errorf("after delete values = %v, want [x] (empty value y removed)", got)
	}
	if err := idx.Replace([]*obj{newObj("ns2", "c", "2", "z"), newObj("ns", "a", "2", "y")}); err != nil {
		t.Fatal(err)
	}
	if got, want := sorted(idx.ListIndexFuncValues("tag")), []string{"y", "z"}; !slices.Equal(got, want) {
		t.Errorf("after Replace tag values = %v, want %v", got, want)
	}
	if got, want := byIndex(t, idx, "tag", "y"), []string{"ns/a@2"}; !slices.Equal(got, want) {
		t.Errorf("after Replace ByIndex(y) = %v, want %v", got, want)
	}
	if got, want := sorted(idx.ListIndexFuncValues(NamespaceIndex)), []string{"ns", "ns2"}; !slices.Equal(got, want) {
		t.Errorf("after Replace namespace values = %v, want %v", got, want)
	}
}

func TestIndexerAddIndexers(t *testing.T) {
	t.Run("before data", func(t *testing.T) {
		idx := NewIndexer(IndexerOptions[*obj]{})
		if err := idx.AddIndexers(Indexers[*obj]{"tag": tagIndex}); err != nil {
			t.Fatal(err)
		}
		if err := idx.Add(newObj("ns", "a", "1", "x")); err != nil {
			t.Fatal(err)
		}
		if got := indexKeys(t, idx, "tag", "x"); !slices.Equal(got, []string{"ns/a"}) {
			t.Errorf("IndexKeys = %v, want [ns/a]", got)
		}
	})
	t.Run("after data", func(t *testing.T) {
		idx := NewIndexer(IndexerOptions[*obj]{})
		if err := idx.Add(newObj("ns", "a", "1", "x")); err != nil {
			t.Fatal(err)
		}
		if err := idx.AddIndexers(Indexers[*obj]{"tag": tagIndex}); err != nil {
			t.Fatal(err)
		}
		if got := indexKeys(t, idx, "tag", "x"); !slices.Equal(got, []string{"ns/a"}) {
			t.Errorf("IndexKeys = %v, want [ns/a]", got)
		}
	})
	t.Run("duplicate name", func(t *testing.T) {
		idx := newTagIndexer(t)
		err := idx.AddIndexers(Indexers[*obj]{"tag": tagIndex})
		if !errors.Is(err, ErrIndexExists) {
			t.Fatalf("err = %v, want ErrIndexExists", err)
		}
	})
	t.Run("function fails on stored data", func(t *testing.T) {
		idx := NewIndexer(IndexerOptions[*obj]{})
		if err := idx.Add(newObj("ns", "a", "1", "bad")); err != nil {
			t.Fatal(err)
		}
		err := idx.AddIndexers(Indexers[*obj]{"tag": tagIndex, "other": tagIndex})
		if !errors.Is(err, ErrIndexFunc) || !errors.Is(err, errBadTag) {
			t.Fatalf("err = %v, want ErrIndexFunc wrapping errBadTag", err)
		}
		if got := idx.GetIndexers(); len(got) != 0 {
			t.Fatalf("indexers after failed AddIndexers = %v, want none", got)
		}
	})
}

// TestIndexerRejectsBadInputUnchanged checks that each kind of bad input is
// a clear error and leaves the content and the indexes as they were.
func TestIndexerRejectsBadInputUnchanged(t *testing.T) {
	var nilObj *obj
	keyErr := errors.New("key func failed")
	failingKey := func(o *obj) (string, error) {
		if o.name == "fail" {
			return "", keyErr
		}
		return MetaNamespaceKey(o)
	}
	tests := []struct {
		name    string
		write   func(*Indexer[*obj]) error
		wantErr error
	}{
		{"add nil", func(s *Indexer[*obj]) error { return s.Add(nilObj) }, ErrInvalidObject},
		{"update nil", func(s *Indexer[*obj]) error { return s.Update(nilObj) }, ErrInvalidObject},
		{"delete nil", func(s *Indexer[*obj]) error { return s.Delete(nilObj) }, ErrInvalidObject},
		{"get nil", func(s *Indexer[*obj]) error { _, _, err := s.Get(nilObj); return err }, ErrInvalidObject},
		{"index nil", func(s *Indexer[*obj]) error { _, err := s.Index("tag", nilObj); return err }, ErrInvalidObject},
		{"empty name", func(s *Indexer[*obj]) error { return s.Add(newObj("ns", "", "1")) }, ErrInvalidObject},
		{"key func fails", func(s *Indexer[*obj]) error { return s.Add(newObj("ns", "fail", "1")) }, keyErr},
		{"wrong namespace", func(s *Indexer[*obj]) error { return s.Add(newObj("other", "c", "1")) }, ErrWrongNamespace},
		{"index func fails on add", func(s *Indexer[*obj]) error { return s.Add(newObj("ns", "c", "1", "bad")) }, ErrIndexFunc},
		{"index func fails on update", func(s *Indexer[*obj]) error { return s.Update(newObj("ns", "a", "2", "y", "bad")) }, ErrIndexFunc},
		{"replace, index func fails", func(s *Indexer[*obj]) error { return s.Replace([]*obj{newObj("ns", "z", "1", "bad")}) }, ErrIndexFunc},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewIndexer(IndexerOptions[*obj]{
				KeyFunc:   failingKey,
				Namespace: "ns",
				Indexers:  Indexers[*obj]{"tag": tagIndex},
			})
			for _, o := range []*obj{newObj("ns", "a", "1", "x"), newObj("ns", "b", "1", "x")} {
				if err := s.Add(o); err != nil {
					t.Fatal(err)
				}
			}
			err := tt.write(s)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got, want := names(s.List()), []string{"ns/a@1", "ns/b@1"}; !slices.Equal(got, want) {
				t.Errorf("List = %v, want %v (unchanged)", got, want)
			}
			if got := idxValues(s, "tag"); !slices.Equal(got, []string{"x"}) {
				t.Errorf("tag values = %v, want [x] (unchanged)", got)
			}
			if got, want := indexKeys(t, s, "tag", "x"), []string{"ns/a", "ns/b"}; !slices.Equal(got, want) {
				t.Errorf("IndexKeys(x) = %v, want %v (unchanged)", got, want)
			}
		})
	}
}

// A Replace stores every item it can and skips the others, naming them.
func TestIndexerReplaceSkipsItemsItCannotStore(t *testing.T) {
	var nilObj *obj
	failingKey := func(o *obj) (string, error) {
		if o.name == "fail" {
			return "", errBadTag
		}
		return MetaNamespaceKey(o)
	}
	s := NewIndexer(IndexerOptions[*obj]{KeyFunc: failingKey, Namespace: "ns", Indexers: Indexers[*obj]{"tag": tagIndex}})
	err := s.Replace([]*obj{newObj("ns", "a", "1", "x"), nilObj, newObj("other", "b", "1"), newObj("ns", "fail", "1"), newObj("ns", "c", "1", "x")})
	var skipped *SkippedError
	if !errors.As(err, &skipped) || !errors.Is(err, ErrSkipped) {
		t.Fatalf("err = %v, want a *SkippedError", err)
	}
	if len(skipped.Errs) != 3 || skipped.Total != 5 {
		t.Fatalf("skipped %d of %d, want 3 of 5: %v", len(skipped.Errs), skipped.Total, err)
	}
	for _, want := range []error{ErrInvalidObject, ErrWrongNamespace, errBadTag} {
		if !errors.Is(err, want) {
			t.Errorf("err does not match %v: %v", want, err)
		}
	}
	if got, want := names(s.List()), []string{"ns/a@1", "ns/c@1"}; !slices.Equal(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
	if got, want := indexKeys(t, s, "tag", "x"), []string{"ns/a", "ns/c"}; !slices.Equal(got, want) {
		t.Errorf("IndexKeys(x) = %v, want %v", got, want)
	}
}

func idxValues(s *Indexer[*obj], name string) []string { return sorted(s.ListIndexFuncValues(name)) }

func TestNamespaceErrorDetail(t *testing.T) {
	s := NewIndexer(IndexerOptions[*obj]{Namespace: "ns"})
	err := s.Add(newObj("other", "c", "1"))
	var ne *NamespaceError
	if !errors.As(err, &ne) || ne.Want != "ns" || ne.Got != "other" || ne.Name != "c" {
		t.Fatalf("err = %v, want *NamespaceError{ns, other, c}", err)
	}
}

func TestNewIndexerPanicsOnNilIndexFunc(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a nil index function")
		}
	}()
	NewIndexer(IndexerOptions[*obj]{Indexers: Indexers[*obj]{"x": nil}})
}

// TestIndexerCleansUpWhenOldValuesCannotBeRecomputed covers a stored object
// the index function now fails on (it was mutated in the cache, which is
// forbidden): deleting or replacing it must still leave no key behind.
func TestIndexerCleansUpWhenOldValuesCannotBeRecomputed(t *testing.T) {
	for _, op := range []string{"delete", "update"} {
		t.Run(op, func(t *testing.T) {
			a := newObj("ns", "a", "1", "x", "y")
			idx := newTagIndexer(t, a, newObj("ns", "b", "1", "x"))
			a.tags = []string{"bad"} // the forbidden mutation
			var err error
			if op == "delete" {
				err = idx.Delete(a)
			} else {
				err = idx.Update(newObj("ns", "a", "2", "z"))
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{"x": {"ns/b"}}
			if op == "update" {
				want["z"] = []string{"ns/a"}
			}
			for v, keys := range want {
				if got := indexKeys(t, idx, "tag", v); !slices.Equal(got, keys) {
					t.Errorf("IndexKeys(%s) = %v, want %v", v, got, keys)
				}
			}
			if got := len(idx.ListIndexFuncValues("tag")); got != len(want) {
				t.Errorf("tag index has %d values, want %d (y left dangling?)", got, len(want))
			}
		})
	}
}

func TestIndexerConcurrentReadersAndWriters(t *testing.T) {
	idx := newTagIndexer(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 300 {
				o := newObj(fmt.Sprint("ns", w), fmt.Sprint(i%20), fmt.Sprint(i), modelTags[i%3])
				var err error
				switch i % 3 {
				case 0, 1:
					err = idx.Update(o)
				default:
					err = idx.Delete(o)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range 300 {
				if _, err := idx.ByIndex("tag", "x"); err != nil {
					t.Error(err)
					return
				}
				idx.List()
				idx.ListIndexFuncValues(NamespaceIndex)
			}
		})
	}
	wg.Wait()
	// The indexes agree with the final content.
	want := map[string]*obj{}
	for _, o := range idx.List() {
		want[o.ns+"/"+o.name] = o
	}
	if err := checkIndexer(idx, want); err != nil {
		t.Fatal(err)
	}
}

func TestIndexerUpdateWithTheStoredObjectKeepsIndexes(t *testing.T) {
	a := newObj("ns", "a", "1", "x")
	idx := newTagIndexer(t, a)
	if err := idx.Update(a); err != nil {
		t.Fatal(err)
	}
	if got := indexKeys(t, idx, "tag", "x"); !slices.Equal(got, []string{"ns/a"}) {
		t.Fatalf("IndexKeys(x) = %v", got)
	}
	if err := idx.Update(newObj("ns", "a", "2", "y")); err != nil {
		t.Fatal(err)
	}
	if got := idxValues(idx, "tag"); !slices.Equal(got, []string{"y"}) {
		t.Fatalf("tag values = %v, want [y]", got)
	}
}

package cache

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestSplitKeyInvertsJoinKey(t *testing.T) {
	for _, tc := range []struct {
		key, ns, name string
		ok            bool
	}{
		{"ns/a", "ns", "a", true},
		{"a", "", "a", true},
		{"", "", "", true},
		{"ns/a/b", "ns", "a/b", true},
		{"/a", "", "a", false},
		{"ns/", "ns", "", true},
	} {
		ns, name, ok := splitKey(tc.key)
		if ns != tc.ns || name != tc.name || ok != tc.ok {
			t.Errorf("splitKey(%q) = %q, %q, %v; want %q, %q, %v", tc.key, ns, name, ok, tc.ns, tc.name, tc.ok)
		}
		if ok && joinKey(ns, name) != tc.key {
			t.Errorf("joinKey(splitKey(%q)) = %q", tc.key, joinKey(ns, name))
		}
	}
	for _, tc := range []struct {
		key     string
		o       *obj
		fitting bool
	}{
		{"ns/a", newObj("ns", "a", "1"), true},
		{"a", newObj("", "a", "1"), true},
		{"a", newObj("ns", "a", "1"), false},         // NameKey on a namespaced object
		{"a/b", newObj("", "a/b", "1"), false},       // would split into ("a", "b")
		{"/b", newObj("", "b", "1"), false},          // not what joinKey builds
		{"a/b/c", newObj("a/b", "c", "1"), false},    // namespace with '/'
		{"uid-1", newObj("ns", "uid-1", "1"), false}, // a UID-style key
		{"ns/a", nil, false},
	} {
		if got := fits(tc.key, tc.o); got != tc.fitting {
			t.Errorf("fits(%q, %v) = %v, want %v", tc.key, tc.o, got, tc.fitting)
		}
	}
}

// TestIndexerDefaultLayoutIsNestedWithVirtualNamespaceIndex pins down the
// memory layout the default key and namespace index get: no flat map, no
// namespace index sets.
func TestIndexerDefaultLayoutIsNestedWithVirtualNamespaceIndex(t *testing.T) {
	idx := newTagIndexer(t, newObj("a", "1", "1", "x"), newObj("b", "2", "1"), newObj("", "c", "1"))
	s := idx.store
	if !s.items.isNested() {
		t.Fatal("default keys are stored flat")
	}
	if s.indices[s.pos[NamespaceIndex]] != nil {
		t.Error("namespace index has sets of its own")
	}
	if s.indices[s.pos["tag"]] == nil {
		t.Error("tag index is virtual")
	}
	if err := idx.Replace([]*obj{newObj("a", "1", "2")}); err != nil {
		t.Fatal(err)
	}
	if !s.items.isNested() || s.indices[s.pos[NamespaceIndex]] != nil {
		t.Error("Replace with default keys left the nested layout")
	}
}

// TestIndexerCustomKeyFuncFallsBackToFlat stores namespaced objects under
// their name alone (so two namespaces collide) and under a UID-style key
// (so an object moves between namespaces under one key); every read must
// answer by key, as a flat map would.
func TestIndexerCustomKeyFuncFallsBackToFlat(t *testing.T) {
	t.Run("name only", func(t *testing.T) {
		idx := NewIndexer(IndexerOptions[*obj]{KeyFunc: NameKey[*obj], Indexers: Indexers[*obj]{NamespaceIndex: MetaNamespaceIndexFunc[*obj]}})
		a, b := newObj("ns1", "x", "1"), newObj("ns2", "x", "2")
		for _, o := range []*obj{a, b} {
			if err := idx.Add(o); err != nil {
				t.Fatal(err)
			}
		}
		if got := sorted(idx.ListKeys()); !slices.Equal(got, []string{"x"}) {
			t.Errorf("ListKeys = %v", got)
		}
		if got, ok, _ := idx.GetByKey("x"); !ok || got != b {
			t.Errorf("GetByKey(x) = %v, %v", got, ok)
		}
		if _, ok, _ := idx.GetByKey("ns2/x"); ok {
			t.Error("GetByKey(ns2/x) found an object stored under x")
		}
		g := idx
		if got, ok := g.GetByNamespaceName("", "x"); !ok || got != b {
			t.Errorf("GetByNamespaceName(\"\", x) = %v, %v", got, ok)
		}
		if _, ok := g.GetByNamespaceName("ns2", "x"); ok {
			t.Error("GetByNamespaceName(ns2, x) found an object stored under x")
		}
		if got := idxValues(idx, NamespaceIndex); !slices.Equal(got, []string{"ns2"}) {
			t.Errorf("namespaces %v, want [ns2]", got)
		}
		if got := indexKeys(t, idx, NamespaceIndex, "ns2"); !slices.Equal(got, []string{"x"}) {
			t.Errorf("IndexKeys(ns2) = %v", got)
		}
	})
	t.Run("uid moves between namespaces", func(t *testing.T) {
		uid := func(o *obj) (string, error) { return o.rv, nil } // rv stands in for a UID
		idx := NewIndexer(IndexerOptions[*obj]{KeyFunc: uid, Indexers: Indexers[*obj]{NamespaceIndex: MetaNamespaceIndexFunc[*obj]}})
		if err := idx.Add(newObj("ns1", "a", "u1")); err != nil {
			t.Fatal(err)
		}
		moved := newObj("ns2", "a", "u1")
		if err := idx.Update(moved); err != nil {
			t.Fatal(err)
		}
		if got := idxValues(idx, NamespaceIndex); !slices.Equal(got, []string{"ns2"}) {
			t.Errorf("namespaces %v, want [ns2]", got)
		}
		if got := byIndex(t, idx, NamespaceIndex, "ns2"); !slices.Equal(got, []string{"ns2/a@u1"}) {
			t.Errorf("ByIndex(ns2) = %v", got)
		}
		if got, ok, _ := idx.GetByKey("u1"); !ok || got != moved {
			t.Errorf("GetByKey(u1) = %v, %v", got, ok)
		}
		if err := idx.Delete(moved); err != nil {
			t.Fatal(err)
		}
		if len(idx.List()) != 0 || len(idx.ListIndexFuncValues(NamespaceIndex)) != 0 {
			t.Errorf("after delete: %v, %v", idx.List(), idx.ListIndexFuncValues(NamespaceIndex))
		}
	})
}

// TestIndexerObjectMovesBetweenNamespaces moves an object (delete, then
// add under its new key) with the default key, and checks the namespace
// index forgets the emptied namespace.
func TestIndexerObjectMovesBetweenNamespaces(t *testing.T) {
	a := newObj("ns1", "a", "1")
	idx := newTagIndexer(t, a, newObj("ns3", "b", "1"))
	moved := newObj("ns2", "a", "2")
	if err := idx.Delete(a); err != nil {
		t.Fatal(err)
	}
	if err := idx.Add(moved); err != nil {
		t.Fatal(err)
	}
	if got := idxValues(idx, NamespaceIndex); !slices.Equal(got, []string{"ns2", "ns3"}) {
		t.Errorf("namespaces %v", got)
	}
	if got := indexKeys(t, idx, NamespaceIndex, "ns2"); !slices.Equal(got, []string{"ns2/a"}) {
		t.Errorf("IndexKeys(ns2) = %v", got)
	}
	if got := byIndex(t, idx, NamespaceIndex, "ns1"); len(got) != 0 {
		t.Errorf("ByIndex(ns1) = %v", got)
	}
	if got, _ := idx.Index(NamespaceIndex, newObj("ns2", "z", "1")); len(got) != 1 || got[0] != moved {
		t.Errorf("Index(ns2) = %v", got)
	}
}

// TestIndexerMaterializesIndexThatStopsMatchingNamespace uses an index
// function that gives the namespace until an object says otherwise: the
// index must then answer with its own sets, for old and new objects.
func TestIndexerMaterializesIndexThatStopsMatchingNamespace(t *testing.T) {
	nsOrTag := func(o *obj) ([]string, error) {
		if len(o.tags) > 0 {
			return o.tags, nil
		}
		return []string{o.ns}, nil
	}
	idx := NewIndexer(IndexerOptions[*obj]{Indexers: Indexers[*obj]{"nt": nsOrTag}})
	for _, o := range []*obj{newObj("a", "1", "1"), newObj("a", "2", "1"), newObj("b", "3", "1")} {
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.Update(newObj("a", "2", "2", "a", "t")); err != nil {
		t.Fatal(err)
	}
	if got := idxValues(idx, "nt"); !slices.Equal(got, []string{"a", "b", "t"}) {
		t.Errorf("values %v", got)
	}
	if got := indexKeys(t, idx, "nt", "a"); !slices.Equal(got, []string{"a/1", "a/2"}) {
		t.Errorf("IndexKeys(a) = %v", got)
	}
	if err := idx.Update(newObj("a", "2", "3", "t")); err != nil {
		t.Fatal(err)
	}
	if got := indexKeys(t, idx, "nt", "a"); !slices.Equal(got, []string{"a/1"}) {
		t.Errorf("IndexKeys(a) = %v", got)
	}
	// AddIndexers on a populated store: conforming or not.
	if err := idx.AddIndexers(Indexers[*obj]{NamespaceIndex: MetaNamespaceIndexFunc[*obj], "tag": tagIndex}); err != nil {
		t.Fatal(err)
	}
	s := idx.store
	if s.indices[s.pos[NamespaceIndex]] != nil || s.indices[s.pos["tag"]] == nil {
		t.Error("AddIndexers chose the wrong representation")
	}
	if got := byIndex(t, idx, "tag", "t"); !slices.Equal(got, []string{"a/2@3"}) {
		t.Errorf("ByIndex(tag, t) = %v", got)
	}
}

// layoutNamespaces and layoutNames make objects whose default keys fit
// the nested layout or, with a '/' in the wrong place, do not.
var layoutNamespaces, layoutNames = []string{"", "a", "b", "a/x"}, []string{"1", "2", "b", "a/b", ""}

// TestThreadSafeStoreMatchesMapOverRandomOperations drives a
// threadSafeStore with keys that fit the nested layout and keys that do not
// (custom key functions), and index functions that match the namespace
// always, sometimes, or never, and compares every read with a plain map
// after each operation. Each round starts nested; most end flat.
func TestThreadSafeStoreMatchesMapOverRandomOperations(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	nsOrTag := func(o *obj) ([]string, error) {
		if slices.Contains(o.tags, "z") {
			return o.tags, nil
		}
		return []string{o.ns}, nil
	}
	funcs := Indexers[*obj]{NamespaceIndex: MetaNamespaceIndexFunc[*obj], "nt": nsOrTag, "tag": tagIndex}
	for round := range 40 {
		s := newThreadSafeStore(funcs)
		want := map[string]*obj{}
		rv := 0
		// Rounds differ in how often a key does not fit.
		misfit := []int{0, 0, 2, 10, 50}[round%5]
		mk := func() (string, *obj) {
			rv++
			var tags []string
			if rng.IntN(4) == 0 {
				tags = append(tags, []string{"x", "y", "z"}[rng.IntN(3)])
			}
			o := newObj(layoutNamespaces[rng.IntN(len(layoutNamespaces))], layoutNames[rng.IntN(len(layoutNames))], fmt.Sprint(rv), tags...)
			if rng.IntN(100) < misfit {
				return []string{"/b", "k" + o.name, "a/b/c", o.ns + "|" + o.name}[rng.IntN(4)], o
			}
			return joinKey(o.ns, o.name), o
		}
		for step := range 500 {
			switch op := rng.IntN(100); {
			case op < 50:
				key, o := mk()
				if rng.IntN(20) == 0 {
					o.tags = append(o.tags, "bad")
					if err := s.Update(key, o); !errors.Is(err, ErrIndexFunc) {
						t.Fatalf("round %d step %d: Update(bad) = %v", round, step, err)
					}
					break
				}
				if err := s.Update(key, o); err != nil {
					t.Fatal(err)
				}
				want[key] = o
			case op < 60:
				if len(want) > 0 { // a resync: the stored object again
					key := slices.Collect(maps.Keys(want))[rng.IntN(len(want))]
					if err := s.Update(key, want[key]); err != nil {
						t.Fatal(err)
					}
				}
			case op < 85:
				key, _ := mk()
				if len(want) > 0 && rng.IntN(2) == 0 {
					key = slices.Collect(maps.Keys(want))[rng.IntN(len(want))]
				}
				s.Delete(key)
				delete(want, key)
			default:
				items := map[string]*obj{}
				for range rng.IntN(6) {
					key, o := mk()
					items[key] = o
				}
				if err := s.Replace(maps.Clone(items)); err != nil {
					t.Fatal(err)
				}
				want = items
			}
			if err := checkThreadSafeStore(s, want, funcs); err != nil {
				t.Fatalf("round %d step %d (nested %v): %v", round, step, s.items.isNested(), err)
			}
		}
	}
}

// checkThreadSafeStore compares every read of s with want and the index
// functions applied to it.
func checkThreadSafeStore(s *threadSafeStore[*obj], want map[string]*obj, funcs Indexers[*obj]) error {
	keys := sorted(slices.Collect(maps.Keys(want)))
	if got := sorted(s.ListKeys()); !slices.Equal(got, keys) {
		return fmt.Errorf("ListKeys %q, want %q", got, keys)
	}
	if s.Len() != len(want) || len(s.List()) != len(want) {
		return fmt.Errorf("Len %d, List %d, want %d", s.Len(), len(s.List()), len(want))
	}
	for key, o := range want {
		if got, ok := s.Get(key); !ok || got != o {
			return fmt.Errorf("Get(%q) = %v, %v; want %v", key, got, ok, o)
		}
	}
	for _, ns := range layoutNamespaces {
		for _, name := range layoutNames {
			key := joinKey(ns, name)
			got, ok := s.GetByNamespaceName(ns, name)
			if w, wok := want[key]; ok != wok || got != w {
				return fmt.Errorf("GetByNamespaceName(%q, %q) = %v, %v; want %v, %v", ns, name, got, ok, w, wok)
			}
			if g, gok := s.Get(key); g != got || gok != ok {
				return fmt.Errorf("Get(%q) and GetByNamespaceName differ", key)
			}
		}
	}
	for _, bogus := range []string{"/b", "a/b/c", "k", ""} {
		got, ok := s.Get(bogus)
		if w, wok := want[bogus]; ok != wok || got != w {
			return fmt.Errorf("Get(%q) = %v, %v; want %v, %v", bogus, got, ok, w, wok)
		}
	}
	for name, fn := range funcs {
		wantIdx := map[string][]string{}
		for key, o := range want {
			vals, _ := fn(o)
			for _, v := range vals {
				if !slices.Contains(wantIdx[v], key) {
					wantIdx[v] = append(wantIdx[v], key)
				}
			}
		}
		values := sorted(slices.Collect(maps.Keys(wantIdx)))
		if got := sorted(s.ListIndexFuncValues(name)); !slices.Equal(got, values) {
			return fmt.Errorf("index %s values %q, want %q", name, got, values)
		}
		for _, v := range append(values, "absent") {
			got, err := s.IndexKeys(name, v)
			if err != nil || !slices.Equal(sorted(got), sorted(wantIdx[v])) {
				return fmt.Errorf("index %s[%q] = %q (%v), want %q", name, v, sorted(got), err, sorted(wantIdx[v]))
			}
			objs, err := s.ByIndex(name, v)
			if err != nil || len(objs) != len(wantIdx[v]) {
				return fmt.Errorf("ByIndex(%s, %q) has %d objects (%v), want %d", name, v, len(objs), err, len(wantIdx[v]))
			}
			var probe *obj
			if strings.Contains(name, "tag") {
				probe = newObj("", "p", "0", v)
			} else {
				probe = newObj(v, "p", "0")
			}
			if v == "absent" || v == "bad" {
				continue
			}
			objs, err = s.Index(name, probe)
			if err != nil || len(objs) != len(wantIdx[v]) {
				return fmt.Errorf("Index(%s, %q) has %d objects (%v), want %d", name, v, len(objs), err, len(wantIdx[v]))
			}
		}
	}
	return nil
}

// TestGetByNamespaceNameAllocatesNothing covers the default key, a custom
// KeyFunc giving the same keys (nested too) and NameKey on a namespaced
// object (flat: the key is built on the stack).
func TestGetByNamespaceNameAllocatesNothing(t *testing.T) {
	sameAsDefault := func(o *obj) (string, error) { return o.ns + "/" + o.name, nil }
	for _, tc := range []struct {
		keyFunc    KeyFunc[*obj]
		nested     bool
		ns, stored string
	}{{nil, true, "ns", "a"}, {sameAsDefault, true, "ns", "a"}, {NameKey[*obj], false, "", "a"}} {
		idx := NewIndexer(IndexerOptions[*obj]{KeyFunc: tc.keyFunc, Indexers: Indexers[*obj]{NamespaceIndex: MetaNamespaceIndexFunc[*obj]}})
		if err := idx.Add(newObj("ns", "a", "1")); err != nil {
			t.Fatal(err)
		}
		g := idx
		if g.store.items.isNested() != tc.nested {
			t.Fatalf("nested = %v, want %v", !tc.nested, tc.nested)
		}
		for _, ns := range []string{tc.ns, "ns"} {
			if allocs := testing.AllocsPerRun(100, func() { g.GetByNamespaceName(ns, "a") }); allocs != 0 {
				t.Errorf("GetByNamespaceName(%q, a) allocates %v times (nested %v)", ns, allocs, tc.nested)
			}
		}
		if got, ok := g.GetByNamespaceName(tc.ns, "a"); !ok || got.name != "a" {
			t.Errorf("GetByNamespaceName(%q, a) = %v, %v", tc.ns, got, ok)
		}
	}
}

// TestVirtualIndexAnswersIndexWithSeveralValues queries a virtual index
// with an object its function gives several (and repeated) values.
func TestVirtualIndexAnswersIndexWithSeveralValues(t *testing.T) {
	nsOrTags := func(o *obj) ([]string, error) {
		if o.name == "probe" {
			return o.tags, nil
		}
		return []string{o.ns}, nil
	}
	idx := NewIndexer(IndexerOptions[*obj]{Indexers: Indexers[*obj]{"n": nsOrTags}})
	for _, o := range []*obj{newObj("a", "1", "1"), newObj("b", "2", "1"), newObj("c", "3", "1")} {
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	if s := idx.store; s.indices[0] != nil {
		t.Fatal("index n is not virtual")
	}
	got, err := idx.Index("n", newObj("", "probe", "0", "a", "c", "a", "d"))
	if err != nil || !slices.Equal(names(got), []string{"a/1@1", "c/3@1"}) {
		t.Errorf("Index = %v, %v", names(got), err)
	}
	if got, err := idx.Index("n", newObj("", "probe", "0")); err != nil || len(got) != 0 {
		t.Errorf("Index with no values = %v, %v", names(got), err)
	}
}

// Reserve changes no contents: namespaces reserved but never filled are not
// listed, and what is added after it reads back as without it.
func TestReserveChangesNoContents(t *testing.T) {
	s := newThreadSafeStore(Indexers[*obj]{NamespaceIndex: MetaNamespaceIndexFunc[*obj]})
	var objs []*obj
	for i := range 30 {
		objs = append(objs, newObj(fmt.Sprintf("ns%d", i%3), fmt.Sprintf("o%d", i), "1"))
	}
	objs = append(objs, newObj("", "cluster", "1"), newObj("lonely", "x", "1"))
	s.Reserve(objs)
	if s.Len() != 0 || len(s.ListIndexFuncValues(NamespaceIndex)) != 0 || len(s.ListKeys()) != 0 {
		t.Fatalf("after Reserve: %d objects, namespaces %v", s.Len(), s.ListIndexFuncValues(NamespaceIndex))
	}
	for _, o := range objs[:20] { // ns0..ns2 only
		key, _ := MetaNamespaceKey(o)
		if err := s.Add(key, o); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.ListIndexFuncValues(NamespaceIndex); !slices.Equal(sortedCopy(got), []string{"ns0", "ns1", "ns2"}) {
		t.Fatalf("namespaces %v, want ns0..ns2", got)
	}
	for _, o := range objs[:20] {
		if got, ok := s.GetByNamespaceName(o.GetNamespace(), o.GetName()); !ok || got != o {
			t.Fatalf("%s/%s: got %v, %v", o.GetNamespace(), o.GetName(), got, ok)
		}
	}
	if in, _ := s.ByIndex(NamespaceIndex, "ns1"); len(in) != 7 {
		t.Fatalf("ns1 holds %d objects, want 7", len(in))
	}
	// Emptying a namespace that came from a spare map removes it.
	for _, o := range objs[:20] {
		if o.GetNamespace() == "ns1" {
			key, _ := MetaNamespaceKey(o)
			s.Delete(key)
		}
	}
	// A second Reserve drops unused spares; adding the rest works.
	s.Reserve(objs[20:])
	for _, o := range objs[20:] {
		key, _ := MetaNamespaceKey(o)
		if err := s.Add(key, o); err != nil {
			t.Fatal(err)
		}
	}
	if got := sortedCopy(s.ListIndexFuncValues(NamespaceIndex)); !slices.Equal(got, []string{"", "lonely", "ns0", "ns1", "ns2"}) {
		t.Fatalf("namespaces %v", got)
	}
	if s.Len() != 32-7 {
		t.Fatalf("%d objects, want %d", s.Len(), 32-7)
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// Namespaced reads take no lock in the nested layout. Readers run while
// one writer adds, updates and deletes, replaces the whole content, and
// turns the store flat (a key that does not fit) and nested again (a
// Replace): every hit is the object asked for, and objects present in
// every state of the store are always found. Run with -race.
func TestLockFreeReadsDuringWritesReplacesAndFlattening(t *testing.T) {
	s := newThreadSafeStore(Indexers[*obj]{NamespaceIndex: MetaNamespaceIndexFunc[*obj]})
	stable := map[string]*obj{}
	for i := range 20 {
		o := newObj(fmt.Sprintf("ns%d", i%3), fmt.Sprintf("stable%d", i), "1")
		stable[fmt.Sprintf("ns%d/stable%d", i%3, i)] = o
	}
	if err := s.Replace(maps.Clone(stable)); err != nil {
		t.Fatal(err)
	}
	stableObjs := slices.Collect(maps.Values(stable))
	var (
		stop atomic.Bool
		wg   sync.WaitGroup
		errs = make(chan error, 8)
	)
	for r := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 2))
			for !stop.Load() {
				o := stableObjs[rng.IntN(len(stableObjs))]
				if got, ok := s.GetByNamespaceName(o.GetNamespace(), o.GetName()); !ok || got.GetName() != o.GetName() || got.GetNamespace() != o.GetNamespace() {
					errs <- fmt.Errorf("GetByNamespaceName(%s, %s) = %v, %v", o.GetNamespace(), o.GetName(), got, ok)
					return
				}
				if got, ok := s.Get(o.GetNamespace() + "/" + o.GetName()); !ok || got.GetName() != o.GetName() {
					errs <- fmt.Errorf("Get(%s/%s) = %v, %v", o.GetNamespace(), o.GetName(), got, ok)
					return
				}
				ns, name := fmt.Sprintf("ns%d", rng.IntN(4)), fmt.Sprintf("churn%d", rng.IntN(50))
				if got, ok := s.GetByNamespaceName(ns, name); ok && (got.GetName() != name || got.GetNamespace() != ns) {
					errs <- fmt.Errorf("GetByNamespaceName(%s, %s) = %v", ns, name, got)
					return
				}
			}
		})
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 5_000 {
		ns, name := fmt.Sprintf("ns%d", rng.IntN(4)), fmt.Sprintf("churn%d", rng.IntN(50))
		switch op := rng.IntN(100); {
		case op < 60:
			if err := s.Update(ns+"/"+name, newObj(ns, name, strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		case op < 95:
			s.Delete(ns + "/" + name)
		case op < 97: // a key that does not fit: flat from here on
			if err := s.Add("odd-"+name, newObj(ns, name, "1")); err != nil {
				t.Fatal(err)
			}
		default: // nested again
			if err := s.Replace(maps.Clone(stable)); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

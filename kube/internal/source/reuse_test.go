package source

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
)

func TestObjectMetaOfReadsTheWire(t *testing.T) {
	raw, err := pod("shop", "web-0", "42").Marshal()
	if err != nil {
		t.Fatal(err)
	}
	ns, name, rv, ok := objectMetaOf(raw)
	if !ok || ns != "shop" || name != "web-0" || rv != "42" {
		t.Fatalf("objectMetaOf = %q %q %q %v", ns, name, rv, ok)
	}
	for _, bad := range [][]byte{nil, {0xff}, raw[:5]} {
		if _, _, _, ok := objectMetaOf(bad); ok {
			t.Errorf("objectMetaOf(%x) ok", bad)
		}
	}
}

// A checkpointed source hands back the cached object the bytes name at
// the same resource version, decodes every other, and the transform
// leaves the handed-back object alone.
func TestReuseCachedHandsBackObjectsAtTheSameVersion(t *testing.T) {
	src, err := Typed[*corev1.Pod](&rest.Config{Host: "http://127.0.0.1:1"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := src.codec
	cached := pod("shop", "web-0", "42")
	lookups, empty := 0, true
	reuseCached(c, func() bool { return empty }, func(ns, name, rv string) (*corev1.Pod, bool) {
		lookups++
		return cached, ns == "shop" && name == "web-0" && rv == "42"
	})
	same, _ := pod("shop", "web-0", "42").Marshal()
	if got, err := c.protoObject(same); err != nil || got == cached || lookups != 0 {
		t.Fatalf("with nothing cached: %p (%v) after %d lookups, want a fresh decode and none", got, err, lookups)
	}
	empty = false
	newer, _ := pod("shop", "web-0", "43").Marshal()
	if got, err := c.protoObject(same); err != nil || got != cached {
		t.Fatalf("same version: %p (%v), want the cached %p", got, err, cached)
	}
	got, err := c.protoObject(newer)
	if err != nil || got == cached || got.ResourceVersion != "43" || got.Spec.NodeName != "node-web-0" {
		t.Fatalf("newer version: %+v (%v), want a fresh decode", got, err)
	}
	if lookups != 2 {
		t.Errorf("%d lookups, want 2", lookups)
	}

	l := &CachedLookup[*corev1.Pod]{}
	calls := 0
	tr := l.SkipCached(func(p *corev1.Pod) (*corev1.Pod, error) { calls++; return p, nil })
	if _, ok := l.at("shop", "web-0", "42"); ok || !l.empty() {
		t.Fatal("lookup before the informer exists found something")
	}
	idx := cache.NewIndexer(cache.IndexerOptions[*corev1.Pod]{})
	if err := idx.Add(cached); err != nil {
		t.Fatal(err)
	}
	l.SetReader(idx.Reader())
	if l.empty() {
		t.Fatal("a cache of one object counts as empty")
	}
	if got, ok := l.at("shop", "web-0", "42"); !ok || got != cached {
		t.Fatal("cached object at its version not found")
	}
	if _, ok := l.at("shop", "web-0", "41"); ok {
		t.Fatal("cached object found at another version")
	}
	tr(cached)
	tr(pod("shop", "web-0", "42")) // equal, but not the cached object
	if calls != 1 {
		t.Fatalf("transform called %d times, want once (the object not cached)", calls)
	}
}

// In a watch stream only an added object can be one the cache holds at
// that version (a streaming relist); modifications, deletes and bookmarks
// are decoded without a lookup.
func TestReuseCachedLooksUpOnlyAddedWatchEvents(t *testing.T) {
	src, err := Typed[*corev1.Pod](&rest.Config{Host: "http://127.0.0.1:1"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := src.codec
	cached := pod("shop", "web-0", "42")
	lookups := 0
	reuseCached(c, func() bool { return false }, func(ns, name, rv string) (*corev1.Pod, bool) {
		lookups++
		return cached, ns == "shop" && name == "web-0" && rv == "42"
	})
	for _, tc := range []struct {
		typ        string
		wantCached bool
	}{{"ADDED", true}, {"MODIFIED", false}, {"DELETED", false}} {
		frame := protoFrame(t, tc.typ, pod("shop", "web-0", "42"))
		ev, err := decodeProtoEvent(c, frame[4:])
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		if got := ev.Object == cached; got != tc.wantCached {
			t.Errorf("%s: cached object handed back %v, want %v", tc.typ, got, tc.wantCached)
		}
	}
	if lookups != 1 {
		t.Errorf("%d lookups, want 1 (the added event)", lookups)
	}
}

// Finding a listed object in the cache copies nothing off the wire: a
// relist over a full cache looks up every object, and each copy would be
// garbage on a full heap.
func TestReuseCachedFindsACachedObjectWithoutAllocating(t *testing.T) {
	src, err := Typed[*corev1.Pod](&rest.Config{Host: "http://127.0.0.1:1"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cached := pod("shop", "web-0", "42")
	idx := cache.NewIndexer(cache.IndexerOptions[*corev1.Pod]{})
	if err := idx.Add(cached); err != nil {
		t.Fatal(err)
	}
	l := &CachedLookup[*corev1.Pod]{}
	l.SetReader(idx.Reader())
	if !src.ReuseCached(l) {
		t.Fatal("a typed source does not reuse")
	}
	raw, err := pod("shop", "web-0", "42").Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	allocs := testing.AllocsPerRun(100, func() { got, err = src.codec.protoObject(raw) })
	if err != nil || got != cached {
		t.Fatalf("decode of the cached version: %p (%v), want the cached %p", got, err, cached)
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per lookup of a cached object, want 0", allocs)
	}
}

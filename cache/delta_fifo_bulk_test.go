package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
)

// ghostKeys is a KnownObjects that lists keys it then cannot find: a
// Replace sees something known (so it takes its general path) yet infers
// no deletion, which makes its outcome comparable with the path for a
// queue that knows nothing.
type ghostKeys struct{}

func (ghostKeys) ListKeys() []string { return []string{"ghost/x"} }
func (ghostKeys) GetByKey(string) (*obj, bool, error) {
	return nil, false, nil
}

// observeReplace runs setup on f, then Replace(list), and records what a
// user of the queue can see: ListKeys (if peek), Len, HasSynced, and for
// each Pop its deltas, isInInitialList and HasSynced afterwards. ListKeys
// moves a bulk Replace into the queue's map, so peek chooses which way of
// popping the empty-queue path takes.
func observeReplace(t *testing.T, f *DeltaFIFO[*obj], setup func(*DeltaFIFO[*obj]), list []*obj, peek bool) []string {
	t.Helper()
	setup(f)
	if err := f.Replace(list, "1"); err != nil {
		t.Fatal(err)
	}
	keys := "-"
	if peek {
		keys = fmt.Sprint(f.ListKeys())
	}
	out := []string{fmt.Sprintf("keys=%s len=%d synced=%v", keys, f.Len(), f.HasSynced())}
	for f.Len() > 0 {
		var initial bool
		ds, err := f.Pop(context.Background(), func(_ Deltas[*obj], isInitial bool) error {
			initial = isInitial
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s initial=%v synced=%v", describe(ds), initial, f.HasSynced()))
	}
	return out
}

func TestDeltaFIFOReplaceIntoEmptyQueueMatchesGeneralPath(t *testing.T) {
	a1, a2, b1, c1 := newObj("ns", "a", "1"), newObj("ns", "a", "2"), newObj("ns", "b", "1"), newObj("other", "c", "1")
	drained := func(f *DeltaFIFO[*obj]) { // a first Replace, fully processed
		_ = f.Replace([]*obj{newObj("ns", "z", "1")}, "1")
		for f.Len() > 0 {
			_, _ = f.Pop(context.Background(), func(Deltas[*obj], bool) error { return nil })
		}
	}
	suffix := func(o *obj) (*obj, error) { return newObj(o.ns, o.name+"-t", o.rv), nil }
	tests := []struct {
		name  string
		opts  DeltaFIFOOptions[*obj]
		setup func(*DeltaFIFO[*obj])
		list  []*obj
	}{
		{"first list", DeltaFIFOOptions[*obj]{}, func(*DeltaFIFO[*obj]) {}, []*obj{a1, b1, c1}},
		{"empty first list", DeltaFIFOOptions[*obj]{}, func(*DeltaFIFO[*obj]) {}, nil},
		{"duplicate keys", DeltaFIFOOptions[*obj]{}, func(*DeltaFIFO[*obj]) {}, []*obj{a1, b1, a2}},
		{"emits sync", DeltaFIFOOptions[*obj]{ReplaceEmitsSync: true}, func(*DeltaFIFO[*obj]) {}, []*obj{a1, b1}},
		{"transform", DeltaFIFOOptions[*obj]{Transform: suffix}, func(*DeltaFIFO[*obj]) {}, []*obj{a1, c1}},
		{"relist after drain", DeltaFIFOOptions[*obj]{}, drained, []*obj{b1, a1}},
		{"after a first Add", DeltaFIFOOptions[*obj]{}, func(f *DeltaFIFO[*obj]) {
			_ = f.Add(c1)
			_, _ = f.Pop(context.Background(), func(Deltas[*obj], bool) error { return nil })
		}, []*obj{a1, b1}},
	}
	for _, tt := range tests {
		for _, peek := range []bool{false, true} {
			if tt.name == "duplicate keys" && !peek {
				continue // TestDeltaFIFOBulkReplaceWithDuplicateKeys
			}
			t.Run(fmt.Sprintf("%s/peek=%v", tt.name, peek), func(t *testing.T) {
				fast := observeReplace(t, NewDeltaFIFO(tt.opts), tt.setup, tt.list, peek)
				general := tt.opts
				general.KnownObjects = ghostKeys{}
				slow := observeReplace(t, NewDeltaFIFO(general), tt.setup, tt.list, peek)
				if !slices.Equal(fast, slow) {
					t.Fatalf("empty-queue Replace:\n%v\ngeneral Replace:\n%v", fast, slow)
				}
			})
		}
	}
}

// A first list that names a key twice, popped without anything else
// written: the key is popped twice, its deltas in order, and HasSynced
// waits for both.
func TestDeltaFIFOBulkReplaceWithDuplicateKeys(t *testing.T) {
	a1, a2, b1 := newObj("ns", "a", "1"), newObj("ns", "a", "2"), newObj("ns", "b", "1")
	got := observeReplace(t, NewDeltaFIFO(DeltaFIFOOptions[*obj]{}), func(*DeltaFIFO[*obj]) {}, []*obj{a1, b1, a2}, false)
	want := []string{
		"keys=- len=3 synced=false",
		"Replaced:ns/a@1 initial=true synced=false",
		"Replaced:ns/b@1 initial=true synced=false",
		"Replaced:ns/a@2 initial=true synced=true",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%v\nwant\n%v", got, want)
	}
	// A write after the first pop merges the two entries left of it.
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
	if err := f.Replace([]*obj{a1, b1, a2, newObj("ns", "c", "1")}, "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Pop(context.Background(), func(Deltas[*obj], bool) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := f.Update(newObj("ns", "b", "2")); err != nil {
		t.Fatal(err)
	}
	if got, want := drain(t, f), []string{"Replaced:ns/b@1 Updated:ns/b@2", "Replaced:ns/a@2", "Replaced:ns/c@1"}; !slices.Equal(got, want) || !f.HasSynced() {
		t.Fatalf("after a write: %v (synced %v), want %v (synced)", got, f.HasSynced(), want)
	}
	// ...and one before it merges them all.
	f = NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
	if err := f.Replace([]*obj{a1, b1, a2}, "1"); err != nil {
		t.Fatal(err)
	}
	if keys := f.ListKeys(); !slices.Equal(keys, []string{"ns/a", "ns/b"}) || f.Len() != 2 {
		t.Fatalf("ListKeys %v, Len %d", keys, f.Len())
	}
	if got, want := drain(t, f), []string{"Replaced:ns/a@1 Replaced:ns/a@2", "Replaced:ns/b@1"}; !slices.Equal(got, want) || !f.HasSynced() {
		t.Fatalf("after a spill: %v (synced %v), want %v (synced)", got, f.HasSynced(), want)
	}
}

func TestDeltaFIFOReplaceIntoEmptyQueueWithEmptyKnownObjects(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{KnownObjects: knownStore(t)})
	if err := f.Replace([]*obj{newObj("ns", "a", "1"), newObj("ns", "b", "1")}, "1"); err != nil {
		t.Fatal(err)
	}
	got := drain(t, f)
	want := []string{"Replaced:ns/a@1", "Replaced:ns/b@1"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if !f.HasSynced() {
		t.Fatal("HasSynced false after the first list was processed")
	}
}

func TestDeltaFIFOPopKeyedHandsOverTheQueueKey(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
	if err := f.Replace([]*obj{newObj("ns", "a", "1"), newObj("", "b", "1")}, "1"); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for f.Len() > 0 {
		_, err := f.PopKeyed(context.Background(), func(key string, _ Deltas[*obj], initial bool) error {
			if !initial {
				t.Errorf("%s: not initial", key)
			}
			keys = append(keys, key)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(keys, []string{"ns/a", "b"}) {
		t.Fatalf("keys %v", keys)
	}
}

func TestDeltaFIFOReleasesStorageWhenDrained(t *testing.T) {
	const n = 3 * shrinkThreshold
	list := make([]*obj, n)
	for i := range list {
		list[i] = newObj("ns", strconv.Itoa(i), "1")
	}
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
	if err := f.Replace(list, "1"); err != nil {
		t.Fatal(err)
	}
	// A first list is held without a map...
	if len(f.items) != 0 || f.queue.len() != 0 || f.Len() != n || len(f.bulkKeys) != n {
		t.Fatalf("after Replace: %d in items, %d in queue, %d in bulk; want 0, 0, %d", len(f.items), f.queue.len(), len(f.bulkKeys), n)
	}
	if got := drain(t, f); len(got) != n {
		t.Fatalf("popped %d keys, want %d", len(got), n)
	}
	if f.bulkKeys != nil || f.bulkDeltas != nil || f.grown != 0 {
		t.Fatalf("drained bulk kept its storage")
	}
	// ...until another write comes before it is popped.
	f = NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
	if err := f.Replace(list, "1"); err != nil {
		t.Fatal(err)
	}
	if err := f.Add(newObj("ns", "extra", "1")); err != nil {
		t.Fatal(err)
	}
	if f.grown != n+1 || len(f.queue.buf) < n+1 || f.bulkKeys != nil {
		t.Fatalf("after Replace and Add: grown=%d queue capacity=%d, want %d", f.grown, len(f.queue.buf), n+1)
	}
	if got := drain(t, f); len(got) != n+1 || got[n] != "Added:ns/extra@1" {
		t.Fatalf("popped %d keys (last %q), want %d ending with the Add", len(got), got[len(got)-1], n+1)
	}
	if f.grown != 0 || f.queue.buf != nil || len(f.items) != 0 {
		t.Fatalf("drained queue kept its storage: grown=%d queue capacity=%d", f.grown, len(f.queue.buf))
	}
	// Small backlogs keep their storage: no allocation per drain.
	for i := range 10 {
		if err := f.Add(list[i]); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, f)
	if f.grown != 10 || f.queue.buf == nil {
		t.Fatalf("small drained queue reallocated: grown=%d", f.grown)
	}
	// The queue still works after a release, including a requeue.
	if err := f.Add(list[0]); err != nil {
		t.Fatal(err)
	}
	_, _ = f.Pop(context.Background(), func(Deltas[*obj], bool) error { return ErrRequeue })
	if got := drain(t, f); !slices.Equal(got, []string{"Added:ns/0@1"}) {
		t.Fatalf("after release and requeue: %v", got)
	}
}

func TestRingReserveAndRelease(t *testing.T) {
	var q ring[int]
	for i := range 5 {
		q.push(i)
	}
	q.pop()
	q.reserve(100)
	if len(q.buf) != 128 || q.len() != 4 {
		t.Fatalf("reserve: capacity %d len %d", len(q.buf), q.len())
	}
	var got []int
	q.each(func(e int) { got = append(got, e) })
	if !slices.Equal(got, []int{1, 2, 3, 4}) {
		t.Fatalf("reserve reordered: %v", got)
	}
	q.release() // not empty: kept
	if q.buf == nil {
		t.Fatal("release dropped a non-empty queue")
	}
	for q.len() > 0 {
		q.pop()
	}
	q.release()
	if q.buf != nil || q.len() != 0 {
		t.Fatal("release kept an empty queue's array")
	}
	q.push(7)
	if q.pop() != 7 {
		t.Fatal("queue unusable after release")
	}
}

// A requeue of an entry popped from a first list puts it behind the rest of
// that list, and HasSynced waits for its second processing.
func TestDeltaFIFOBulkRequeueGoesBehindTheList(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
	if err := f.Replace([]*obj{newObj("ns", "a", "1"), newObj("ns", "b", "1"), newObj("ns", "c", "1")}, "1"); err != nil {
		t.Fatal(err)
	}
	_, err := f.Pop(context.Background(), func(Deltas[*obj], bool) error { return ErrRequeue })
	if !errors.Is(err, ErrRequeue) || f.HasSynced() || f.Len() != 3 {
		t.Fatalf("after a requeue: err %v, synced %v, len %d", err, f.HasSynced(), f.Len())
	}
	var got []string
	for f.Len() > 0 {
		ds, err := f.Pop(context.Background(), func(_ Deltas[*obj], initial bool) error {
			if !initial {
				t.Error("not initial")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, describe(ds))
	}
	if want := []string{"Replaced:ns/b@1", "Replaced:ns/c@1", "Replaced:ns/a@1"}; !slices.Equal(got, want) || !f.HasSynced() {
		t.Fatalf("popped %v (synced %v), want %v (synced)", got, f.HasSynced(), want)
	}
}

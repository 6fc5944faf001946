package cache

import (
	"context"
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
// user of the queue can see: Len, ListKeys, HasSynced, and for each Pop its
// deltas, isInInitialList and HasSynced afterwards.
func observeReplace(t *testing.T, f *DeltaFIFO[*obj], setup func(*DeltaFIFO[*obj]), list []*obj) []string {
	t.Helper()
	setup(f)
	if err := f.Replace(list, "1"); err != nil {
		t.Fatal(err)
	}
	out := []string{fmt.Sprintf("len=%d keys=%v synced=%v", f.Len(), f.ListKeys(), f.HasSynced())}
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
		t.Run(tt.name, func(t *testing.T) {
			fast := observeReplace(t, NewDeltaFIFO(tt.opts), tt.setup, tt.list)
			general := tt.opts
			general.KnownObjects = ghostKeys{}
			slow := observeReplace(t, NewDeltaFIFO(general), tt.setup, tt.list)
			if !slices.Equal(fast, slow) {
				t.Fatalf("empty-queue Replace:\n%v\ngeneral Replace:\n%v", fast, slow)
			}
		})
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
	if f.grown != n || len(f.queue.buf) < n {
		t.Fatalf("after Replace: grown=%d queue capacity=%d, want %d", f.grown, len(f.queue.buf), n)
	}
	if got := drain(t, f); len(got) != n {
		t.Fatalf("popped %d keys, want %d", len(got), n)
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

package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
func (ghostKeys) Len() int { return 1 }

// readAll renders what the reads of f show: Len, ListKeys, and GetByKey of
// every listed key and of probe.
func readAll(f *DeltaFIFO[*obj], probe string) string {
	keys := f.ListKeys()
	out := fmt.Sprintf("len=%d keys=%v", f.Len(), keys)
	for _, key := range append(keys, probe) {
		ds, ok, err := f.GetByKey(key)
		out += fmt.Sprintf(" %s:[%s]%v,%v", key, describe(ds), ok, err)
	}
	return out
}

// observeReplace runs setup on f, then Replace(list), and records what a
// user of the queue can see: Len and HasSynced, and for each Pop its key,
// deltas, isInInitialList and HasSynced afterwards. With peek, it also
// records every read (readAll) before the first Pop and after each one.
func observeReplace(t *testing.T, f *DeltaFIFO[*obj], setup func(*DeltaFIFO[*obj]), list []*obj, peek bool) []string {
	t.Helper()
	setup(f)
	if err := f.Replace(list, "1"); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		if !peek {
			return ""
		}
		return " " + readAll(f, "ns/a")
	}
	out := []string{fmt.Sprintf("len=%d synced=%v%s", f.Len(), f.HasSynced(), read())}
	for f.Len() > 0 {
		var (
			key     string
			initial bool
		)
		ds, err := f.Pop(context.Background(), func(k string, _ Deltas[*obj], isInitial bool) error {
			key, initial = k, isInitial
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s=%s initial=%v synced=%v%s", key, describe(ds), initial, f.HasSynced(), read()))
	}
	return out
}

func TestDeltaFIFOReplaceIntoEmptyQueueMatchesGeneralPath(t *testing.T) {
	a1, a2, b1, c1 := newObj("ns", "a", "1"), newObj("ns", "a", "2"), newObj("ns", "b", "1"), newObj("other", "c", "1")
	drained := func(f *DeltaFIFO[*obj]) { // a first Replace, fully processed
		_ = f.Replace([]*obj{newObj("ns", "z", "1")}, "1")
		for f.Len() > 0 {
			_, _ = f.Pop(context.Background(), func(string, Deltas[*obj], bool) error { return nil })
		}
	}
	suffix := func(o *obj) (*obj, error) { return newObj(o.ns, o.name+"-t", o.rv), nil }
	byName := func(o *obj) (string, error) { return o.name, nil }
	tests := []struct {
		name  string
		opts  DeltaFIFOOptions[*obj]
		setup func(*DeltaFIFO[*obj])
		list  []*obj
	}{
		{"first list", DeltaFIFOOptions[*obj]{}, func(*DeltaFIFO[*obj]) {}, []*obj{a1, b1, c1}},
		{"sorted first list", DeltaFIFOOptions[*obj]{}, func(*DeltaFIFO[*obj]) {}, []*obj{a1, b1, newObj("ns", "c", "1")}},
		{"empty first list", DeltaFIFOOptions[*obj]{}, func(*DeltaFIFO[*obj]) {}, nil},
		{"duplicate keys", DeltaFIFOOptions[*obj]{}, func(*DeltaFIFO[*obj]) {}, []*obj{a1, b1, a2}},
		{"duplicate keys, sorted", DeltaFIFOOptions[*obj]{}, func(*DeltaFIFO[*obj]) {}, []*obj{a1, a2, b1}},
		{"duplicate keys from a key function", DeltaFIFOOptions[*obj]{KeyFunc: byName}, func(*DeltaFIFO[*obj]) {},
			[]*obj{a1, b1, newObj("other", "a", "1")}},
		{"emits sync", DeltaFIFOOptions[*obj]{ReplaceEmitsSync: true}, func(*DeltaFIFO[*obj]) {}, []*obj{a1, b1}},
		{"transform", DeltaFIFOOptions[*obj]{Transform: suffix}, func(*DeltaFIFO[*obj]) {}, []*obj{a1, c1}},
		{"relist after drain", DeltaFIFOOptions[*obj]{}, drained, []*obj{b1, a1}},
		{"after a first Add", DeltaFIFOOptions[*obj]{}, func(f *DeltaFIFO[*obj]) {
			_ = f.Add(c1)
			_, _ = f.Pop(context.Background(), func(string, Deltas[*obj], bool) error { return nil })
		}, []*obj{a1, b1}},
	}
	for _, tt := range tests {
		for _, peek := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/peek=%v", tt.name, peek), func(t *testing.T) {
				fast := observeReplace(t, NewDeltaFIFO(tt.opts), tt.setup, tt.list, peek)
				general := tt.opts
				general.KnownObjects = ghostKeys{}
				slow := observeReplace(t, NewDeltaFIFO(general), tt.setup, tt.list, peek)
				if !slices.Equal(fast, slow) {
					t.Fatalf("empty-queue Replace:\n%s\ngeneral Replace:\n%s", strings.Join(fast, "\n"), strings.Join(slow, "\n"))
				}
			})
		}
	}
}

// A first list that names a key twice (no API server sends one) is popped
// as one entry for that key, with both deltas in list order, as a Replace
// into a queue that knows something pops it.
func TestDeltaFIFOFirstListNamingAKeyTwicePopsItOnce(t *testing.T) {
	a1, a2, b1 := newObj("ns", "a", "1"), newObj("ns", "a", "2"), newObj("ns", "b", "1")
	got := observeReplace(t, NewDeltaFIFO(DeltaFIFOOptions[*obj]{}), func(*DeltaFIFO[*obj]) {}, []*obj{a1, b1, a2}, false)
	want := []string{
		"len=2 synced=false",
		"ns/a=Replaced:ns/a@1 Replaced:ns/a@2 initial=true synced=false",
		"ns/b=Replaced:ns/b@1 initial=true synced=true",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Reads of a first list held in bulk answer from it, and leave it there:
// what Pop hands out afterwards is what it would have handed out without
// them.
func TestDeltaFIFOReadsLeaveTheFirstListAsItWas(t *testing.T) {
	list := []*obj{newObj("ns", "b", "1"), newObj("ns", "a", "1"), newObj("", "c", "1")}
	for _, sortedList := range []bool{false, true} {
		t.Run(fmt.Sprintf("sorted=%v", sortedList), func(t *testing.T) {
			list := slices.Clone(list)
			if sortedList {
				slices.SortFunc(list, func(x, y *obj) int { return strings.Compare(x.ns+"/"+x.name, y.ns+"/"+y.name) })
			}
			want := observeReplace(t, NewDeltaFIFO(DeltaFIFOOptions[*obj]{}), func(*DeltaFIFO[*obj]) {}, list, false)
			f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
			if err := f.Replace(list, "1"); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"ns/a", "ns/b", "c", "ns/missing", ""} {
				_, _, _ = f.GetByKey(key)
			}
			_ = f.ListKeys()
			if len(f.items) != 0 || f.queue.len() != 0 || len(f.bulkKeys) != len(list) {
				t.Fatalf("reads moved the first list: %d in items, %d in queue, %d in bulk", len(f.items), f.queue.len(), len(f.bulkKeys))
			}
			var got []string
			got = append(got, fmt.Sprintf("len=%d synced=%v", f.Len(), f.HasSynced()))
			for f.Len() > 0 {
				var key string
				var initial bool
				ds, err := f.Pop(context.Background(), func(k string, _ Deltas[*obj], isInitial bool) error {
					key, initial = k, isInitial
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s=%s initial=%v synced=%v", key, describe(ds), initial, f.HasSynced()))
				// A popped key is no longer queued; the next one still is.
				if _, ok, _ := f.GetByKey(key); ok {
					t.Fatalf("GetByKey(%s) finds a popped key", key)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("after reads:\n%s\nwithout:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
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

func TestDeltaFIFOPopHandsOverTheQueueKey(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
	if err := f.Replace([]*obj{newObj("ns", "a", "1"), newObj("", "b", "1")}, "1"); err != nil {
		t.Fatal(err)
	}
	if err := f.Add(newObj("ns", "c", "1")); err != nil { // the general path too
		t.Fatal(err)
	}
	var keys []string
	for f.Len() > 0 {
		_, err := f.Pop(context.Background(), func(key string, ds Deltas[*obj], initial bool) error {
			if want := key != "ns/c"; initial != want {
				t.Errorf("%s: initial %v, want %v", key, initial, want)
			}
			if d, _ := ds.Newest(); d.Object.name != key[strings.IndexByte(key, '/')+1:] {
				t.Errorf("key %s for %s", key, describe(ds))
			}
			keys = append(keys, key)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(keys, []string{"ns/a", "b", "ns/c"}) {
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
	_, _ = f.Pop(context.Background(), func(string, Deltas[*obj], bool) error { return ErrRequeue })
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
	_, err := f.Pop(context.Background(), func(string, Deltas[*obj], bool) error { return ErrRequeue })
	if !errors.Is(err, ErrRequeue) || f.HasSynced() || f.Len() != 3 {
		t.Fatalf("after a requeue: err %v, synced %v, len %d", err, f.HasSynced(), f.Len())
	}
	var got []string
	for f.Len() > 0 {
		ds, err := f.Pop(context.Background(), func(_ string, _ Deltas[*obj], initial bool) error {
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

// BenchmarkDeltaFIFOFirstList100k is an informer's first list: a Replace
// of 100,000 pods (in no key order, as a streaming list delivers them)
// into a new, empty DeltaFIFO, which takes the bulk path, then every key
// popped; ns/op is per list.
func BenchmarkDeltaFIFOFirstList100k(b *testing.B) {
	pods := benchPods(100_000)
	nop := func(string, Deltas[*corev1.Pod], bool) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.Pod]{})
		if err := f.Replace(pods, "1"); err != nil {
			b.Fatal(err)
		}
		for f.Len() > 0 {
			if _, err := f.Pop(context.Background(), nop); err != nil {
				b.Fatal(err)
			}
		}
	}
}

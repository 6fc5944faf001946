package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// describe renders deltas as "Type:ns/name@rv", with "Deleted?" for a
// deletion whose final state is unknown.
func describe(ds Deltas[*obj]) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		t := string(d.Type)
		if d.StateUnknown {
			t += "?"
		}
		parts[i] = fmt.Sprintf("%s:%s/%s@%s", t, d.Object.ns, d.Object.name, d.Object.rv)
	}
	return strings.Join(parts, " ")
}

// drain pops every queued key and returns the deltas of each, in order.
func drain(t *testing.T, f *DeltaFIFO[*obj]) []string {
	t.Helper()
	var out []string
	for f.Len() > 0 {
		ds, err := f.Pop(context.Background(), func(string, Deltas[*obj], bool) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, describe(ds))
	}
	return out
}

func knownStore(t *testing.T, objs ...*obj) *Indexer[*obj] {
	t.Helper()
	s := NewIndexer(IndexerOptions[*obj]{})
	for _, o := range objs {
		if err := s.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestDeltaFIFORules(t *testing.T) {
	a1, a2, a3 := newObj("ns", "a", "1"), newObj("ns", "a", "2"), newObj("ns", "a", "3")
	b1, b2, c1 := newObj("ns", "b", "1"), newObj("ns", "b", "2"), newObj("ns", "c", "1")
	tests := []struct {
		name  string
		known []*obj // KnownObjects content; nil means no KnownObjects
		sync  bool   // ReplaceEmitsSync
		ops   func(f *DeltaFIFO[*obj]) error
		want  []string
	}{
		{
			name: "arrival order per key, key keeps its place",
			ops: func(f *DeltaFIFO[*obj]) error {
				return errors.Join(f.Add(a1), f.Add(b1), f.Update(a2), f.Delete(a3), f.Update(b2))
			},
			want: []string{"Added:ns/a@1 Updated:ns/a@2 Deleted:ns/a@3", "Added:ns/b@1 Updated:ns/b@2"},
		},
		{
			name: "two deletes collapse, the older kept",
			ops:  func(f *DeltaFIFO[*obj]) error { return errors.Join(f.Add(a1), f.Delete(a2), f.Delete(a3)) },
			want: []string{"Added:ns/a@1 Deleted:ns/a@2"},
		},
		{
			name: "known delete wins over a later inferred one",
			ops: func(f *DeltaFIFO[*obj]) error {
				return errors.Join(f.Add(a1), f.Delete(a2), f.Replace(nil, "9"))
			},
			want: []string{"Added:ns/a@1 Deleted:ns/a@2"},
		},
		{
			name:  "known delete replaces an earlier inferred one",
			known: []*obj{a1},
			ops:   func(f *DeltaFIFO[*obj]) error { return errors.Join(f.Replace(nil, "9"), f.Delete(a2)) },
			want:  []string{"Deleted:ns/a@2"},
		},
		{
			name: "delete of an unknown key is dropped",
			ops:  func(f *DeltaFIFO[*obj]) error { return errors.Join(f.Delete(a1), f.Add(b1)) },
			want: []string{"Added:ns/b@1"},
		},
		{
			name:  "delete of an unknown key is dropped with KnownObjects",
			known: []*obj{b1},
			ops:   func(f *DeltaFIFO[*obj]) error { return f.Delete(a1) },
			want:  nil,
		},
		{
			name:  "delete of a key in KnownObjects is queued",
			known: []*obj{a1},
			ops:   func(f *DeltaFIFO[*obj]) error { return f.Delete(a2) },
			want:  []string{"Deleted:ns/a@2"},
		},
		{
			name: "replace emits Replaced and infers deletions of queued keys",
			ops: func(f *DeltaFIFO[*obj]) error {
				return errors.Join(f.Add(a1), f.Update(a2), f.Add(c1), f.Replace([]*obj{b1, c1}, "9"))
			},
			want: []string{
				"Added:ns/a@1 Updated:ns/a@2 Deleted?:ns/a@2",
				"Added:ns/c@1 Replaced:ns/c@1",
				"Replaced:ns/b@1",
			},
		},
		{
			name: "replace emits Sync when asked",
			sync: true,
			ops:  func(f *DeltaFIFO[*obj]) error { return f.Replace([]*obj{a1}, "9") },
			want: []string{"Sync:ns/a@1"},
		},
		{
			name:  "replace infers deletions of known keys with their known object",
			known: []*obj{a1, b1, c1},
			ops:   func(f *DeltaFIFO[*obj]) error { return errors.Join(f.Update(b2), f.Replace([]*obj{c1}, "9")) },
			want: []string{
				"Updated:ns/b@2 Deleted?:ns/b@2",
				"Replaced:ns/c@1",
				"Deleted?:ns/a@1",
			},
		},
		{
			name:  "replace infers deletions of queued keys not in KnownObjects",
			known: []*obj{c1},
			ops:   func(f *DeltaFIFO[*obj]) error { return errors.Join(f.Add(a1), f.Replace([]*obj{c1}, "9")) },
			want:  []string{"Added:ns/a@1 Deleted?:ns/a@1", "Replaced:ns/c@1"},
		},
		{
			name: "replace does not repeat a queued deletion",
			ops: func(f *DeltaFIFO[*obj]) error {
				return errors.Join(f.Add(a1), f.Delete(a1), f.Replace(nil, "9"), f.Replace(nil, "10"))
			},
			want: []string{"Added:ns/a@1 Deleted:ns/a@1"},
		},
		{
			name:  "resync emits Sync for known keys not queued",
			known: []*obj{a1, b1},
			ops:   func(f *DeltaFIFO[*obj]) error { return errors.Join(f.Update(a2), f.Resync()) },
			want:  []string{"Updated:ns/a@2", "Sync:ns/b@1"},
		},
		{
			name: "resync without KnownObjects does nothing",
			ops:  func(f *DeltaFIFO[*obj]) error { return errors.Join(f.Add(a1), f.Resync()) },
			want: []string{"Added:ns/a@1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DeltaFIFOOptions[*obj]{ReplaceEmitsSync: tt.sync}
			if tt.known != nil {
				opts.KnownObjects = knownStore(t, tt.known...)
			}
			f := NewDeltaFIFO(opts)
			if err := tt.ops(f); err != nil {
				t.Fatal(err)
			}
			if got := drain(t, f); !slices.Equal(got, tt.want) {
				t.Errorf("popped\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

func TestDeltaFIFOHasSynced(t *testing.T) {
	t.Run("false before any write", func(t *testing.T) {
		if NewDeltaFIFO(DeltaFIFOOptions[*obj]{}).HasSynced() {
			t.Fatal("HasSynced true on a new queue")
		}
	})
	t.Run("after the first Replace is fully processed", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{KnownObjects: knownStore(t, newObj("ns", "gone", "1"))})
		if err := f.Replace([]*obj{newObj("ns", "a", "1"), newObj("ns", "b", "1")}, "1"); err != nil {
			t.Fatal(err)
		}
		if err := f.Add(newObj("ns", "c", "1")); err != nil {
			t.Fatal(err)
		}
		var initial []bool
		for i := range 4 {
			if i < 3 && f.HasSynced() {
				t.Fatalf("HasSynced true after %d pops", i)
			}
			_, err := f.Pop(context.Background(), func(_ string, _ Deltas[*obj], isInitial bool) error {
				initial = append(initial, isInitial)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if i == 2 && !f.HasSynced() {
				t.Fatal("HasSynced false after the 3 initial keys were processed")
			}
		}
		if want := []bool{true, true, true, false}; !slices.Equal(initial, want) {
			t.Fatalf("isInInitialList = %v, want %v", initial, want)
		}
	})
	t.Run("an empty first Replace syncs at once", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
		if err := f.Replace(nil, "1"); err != nil {
			t.Fatal(err)
		}
		if !f.HasSynced() {
			t.Fatal("HasSynced false after an empty Replace")
		}
	})
	t.Run("a write before any Replace syncs at once", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
		if err := f.Add(newObj("ns", "a", "1")); err != nil {
			t.Fatal(err)
		}
		if !f.HasSynced() {
			t.Fatal("HasSynced false after Add")
		}
		if err := f.Replace([]*obj{newObj("ns", "b", "1")}, "1"); err != nil {
			t.Fatal(err)
		}
		if !f.HasSynced() {
			t.Fatal("a later Replace made HasSynced false")
		}
	})
	t.Run("a re-queued initial key keeps it false", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
		if err := f.Replace([]*obj{newObj("ns", "a", "1")}, "1"); err != nil {
			t.Fatal(err)
		}
		_, err := f.Pop(context.Background(), func(string, Deltas[*obj], bool) error { return ErrRequeue })
		if !errors.Is(err, ErrRequeue) {
			t.Fatalf("Pop err = %v, want ErrRequeue", err)
		}
		if f.HasSynced() {
			t.Fatal("HasSynced true while the initial key is re-queued")
		}
		drain(t, f)
		if !f.HasSynced() {
			t.Fatal("HasSynced false after the re-queued key was processed")
		}
	})
	t.Run("a failed, not re-queued initial key counts as processed", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
		if err := f.Replace([]*obj{newObj("ns", "a", "1")}, "1"); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		if _, err := f.Pop(context.Background(), func(string, Deltas[*obj], bool) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("Pop err = %v, want boom", err)
		}
		if !f.HasSynced() || f.Len() != 0 {
			t.Fatalf("HasSynced = %v, Len = %d; want true, 0", f.HasSynced(), f.Len())
		}
	})
}

func TestDeltaFIFORequeue(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
	if err := errors.Join(f.Add(newObj("ns", "a", "1")), f.Add(newObj("ns", "b", "1"))); err != nil {
		t.Fatal(err)
	}
	// While a is processed, a newer delta for a arrives; the requeued deltas
	// go ahead of it, and a keeps the place the newer delta gave it.
	_, err := f.Pop(context.Background(), func(string, Deltas[*obj], bool) error {
		if err := f.Update(newObj("ns", "a", "2")); err != nil {
			t.Error(err)
		}
		return fmt.Errorf("conflict: %w", ErrRequeue)
	})
	if !errors.Is(err, ErrRequeue) {
		t.Fatalf("Pop err = %v, want ErrRequeue", err)
	}
	// b is requeued without newer deltas: it goes to the back.
	if _, err := f.Pop(context.Background(), func(string, Deltas[*obj], bool) error { return ErrRequeue }); !errors.Is(err, ErrRequeue) {
		t.Fatal(err)
	}
	want := []string{"Added:ns/a@1 Updated:ns/a@2", "Added:ns/b@1"}
	if got := drain(t, f); !slices.Equal(got, want) {
		t.Fatalf("popped %q, want %q", got, want)
	}
}

func TestDeltaFIFOKeyBeingProcessedCountsAsKnown(t *testing.T) {
	a1 := newObj("ns", "a", "1")
	tests := []struct {
		name   string
		known  []*obj
		first  func(f *DeltaFIFO[*obj]) error // queues what is popped
		during func(f *DeltaFIFO[*obj]) error // runs inside process
		want   []string
	}{
		{
			name:   "replace infers the deletion of an object being added",
			first:  func(f *DeltaFIFO[*obj]) error { return f.Add(a1) },
			during: func(f *DeltaFIFO[*obj]) error { return f.Replace(nil, "2") },
			want:   []string{"Deleted?:ns/a@1"},
		},
		{
			name:   "delete of an object being added is queued",
			first:  func(f *DeltaFIFO[*obj]) error { return f.Add(a1) },
			during: func(f *DeltaFIFO[*obj]) error { return f.Delete(a1) },
			want:   []string{"Deleted:ns/a@1"},
		},
		{
			name:   "no second delete of an object being deleted",
			known:  []*obj{a1},
			first:  func(f *DeltaFIFO[*obj]) error { return f.Delete(a1) },
			during: func(f *DeltaFIFO[*obj]) error { return errors.Join(f.Delete(a1), f.Replace(nil, "2")) },
			want:   nil,
		},
		{
			name:   "resync skips the key being processed",
			known:  []*obj{a1},
			first:  func(f *DeltaFIFO[*obj]) error { return f.Delete(a1) },
			during: func(f *DeltaFIFO[*obj]) error { return f.Resync() },
			want:   nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// KnownObjects does not change: process has not applied
			// anything downstream yet when during runs.
			f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{KnownObjects: knownStore(t, tt.known...)})
			if err := tt.first(f); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Pop(context.Background(), func(string, Deltas[*obj], bool) error { return tt.during(f) }); err != nil {
				t.Fatal(err)
			}
			if got := drain(t, f); !slices.Equal(got, tt.want) {
				t.Fatalf("popped %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDeltaFIFOTransform(t *testing.T) {
	errReject := errors.New("rejected")
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{Transform: func(o *obj) (*obj, error) {
		if o.rv == "reject" {
			return nil, errReject
		}
		c := *o
		c.tags = nil
		c.rv += "t"
		return &c, nil
	}})
	orig := newObj("ns", "a", "1", "x")
	if err := f.Add(orig); err != nil {
		t.Fatal(err)
	}
	if err := f.Add(newObj("ns", "b", "reject")); !errors.Is(err, errReject) {
		t.Fatalf("err = %v, want errReject", err)
	}
	if orig.rv != "1" || len(orig.tags) != 1 {
		t.Fatal("transform input was modified")
	}
	want := []string{"Added:ns/a@1t"}
	if got := drain(t, f); !slices.Equal(got, want) {
		t.Fatalf("popped %q, want %q", got, want)
	}
}

func TestDeltaFIFORejectsBadInputUnchanged(t *testing.T) {
	var nilObj *obj
	keyErr := errors.New("key failed")
	f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{KeyFunc: func(o *obj) (string, error) {
		if o.name == "fail" {
			return "", keyErr
		}
		return MetaNamespaceKey(o)
	}})
	if err := f.Add(newObj("ns", "a", "1")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"add nil", f.Add(nilObj), ErrInvalidObject},
		{"update nil", f.Update(nilObj), ErrInvalidObject},
		{"delete nil", f.Delete(nilObj), ErrInvalidObject},
		{"key func fails", f.Update(newObj("ns", "fail", "1")), keyErr},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if _, err := f.KeyOf(nilObj); !errors.Is(err, ErrInvalidObject) {
		t.Errorf("KeyOf(nil) err = %v", err)
	}
	if got := f.ListKeys(); !slices.Equal(got, []string{"ns/a"}) {
		t.Fatalf("ListKeys = %v, want [ns/a] (unchanged)", got)
	}
	ds, ok, err := f.GetByKey("ns/a")
	if err != nil || !ok || describe(ds) != "Added:ns/a@1" {
		t.Fatalf("GetByKey = %q, %v, %v", describe(ds), ok, err)
	}
}

// A Replace skips each item it cannot queue and applies the rest: the
// error reports the skipped ones (ErrSkipped, with each item's own error
// inside), a skipped item counts as missing from the list, and HasSynced
// waits only for what was queued.
func TestDeltaFIFOReplaceSkipsBadItemsAndAppliesTheRest(t *testing.T) {
	var nilObj *obj
	errReject := errors.New("rejected")
	errKey := errors.New("key failed")
	reject := func(o *obj) (*obj, error) {
		if o.rv == "reject" {
			return nil, errReject
		}
		return o, nil
	}
	failKey := func(o *obj) (string, error) {
		if o.name == "fail" {
			return "", errKey
		}
		return MetaNamespaceKey(o)
	}
	a1, b1, c1 := newObj("ns", "a", "1"), newObj("ns", "b", "1"), newObj("", "c", "1")
	tests := []struct {
		name     string
		opts     DeltaFIFOOptions[*obj]
		known    []*obj // KnownObjects content; nil means none
		list     []*obj
		cause    error    // the error matches it
		messages []string // each skipped item's error
		want     []string
	}{
		{
			name: "transform fails for one", opts: DeltaFIFOOptions[*obj]{Transform: reject},
			list:  []*obj{b1, newObj("ns", "x", "reject"), a1},
			cause: errReject, messages: []string{`item 1 ("ns/x"): transform: rejected`},
			want: []string{"Replaced:ns/b@1", "Replaced:ns/a@1"},
		},
		{
			name: "key function fails for one", opts: DeltaFIFOOptions[*obj]{KeyFunc: failKey},
			list:  []*obj{a1, newObj("ns", "fail", "1"), c1},
			cause: errKey, messages: []string{`item 1 ("ns/fail"): computing key: key failed`},
			want: []string{"Replaced:ns/a@1", "Replaced:/c@1"},
		},
		{
			name: "default key: bad names and nil", list: []*obj{newObj("ns", "x/y", "1"), a1, nilObj, newObj("ns", "", "1")},
			cause: ErrInvalidObject, messages: []string{
				`item 0 ("ns/x/y"): computing key: invalid object: name "x/y" contains '/'`,
				`item 2: invalid object: nil *cache.obj`,
				`item 3 ("ns/"): computing key: invalid object: empty name (namespace "ns")`,
			},
			want: []string{"Replaced:ns/a@1"},
		},
		{
			name: "default key: bad names and transform failures, in list order", opts: DeltaFIFOOptions[*obj]{Transform: reject},
			list:  []*obj{newObj("a/b", "x", "1"), a1, newObj("ns", "x", "reject"), newObj("ns", "y/z", "1"), b1, nilObj},
			cause: errReject, messages: []string{
				`item 0 ("a/b/x"): computing key: invalid object: namespace "a/b" contains '/'`,
				`item 2 ("ns/x"): transform: rejected`,
				`item 3 ("ns/y/z"): computing key: invalid object: name "y/z" contains '/'`,
				`item 5: invalid object: nil *cache.obj`,
			},
			want: []string{"Replaced:ns/a@1", "Replaced:ns/b@1"},
		},
		{
			name: "every item bad", opts: DeltaFIFOOptions[*obj]{Transform: reject},
			list:  []*obj{newObj("ns", "x", "reject"), newObj("ns", "y", "reject")},
			cause: errReject, messages: []string{`item 0 ("ns/x"): transform: rejected`, `item 1 ("ns/y"): transform: rejected`},
			want: nil,
		},
		{
			name: "relist: a skipped item counts as missing", opts: DeltaFIFOOptions[*obj]{Transform: reject},
			known: []*obj{a1, b1},
			list:  []*obj{newObj("ns", "a", "2"), newObj("ns", "b", "reject")},
			cause: errReject, messages: []string{`item 1 ("ns/b"): transform: rejected`},
			want: []string{"Replaced:ns/a@2", "Deleted?:ns/b@1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			if tt.known != nil {
				opts.KnownObjects = knownStore(t, tt.known...)
			}
			f := NewDeltaFIFO(opts)
			list := slices.Clone(tt.list)
			err := f.Replace(list, "1")
			if !slices.Equal(list, tt.list) {
				t.Fatal("Replace changed the caller's slice")
			}
			var se *SkippedError
			if !errors.Is(err, ErrSkipped) || !errors.Is(err, tt.cause) || !errors.As(err, &se) {
				t.Fatalf("Replace err = %v, want ErrSkipped and %v", err, tt.cause)
			}
			var messages []string
			for _, e := range se.Errs {
				messages = append(messages, e.Error())
			}
			if !slices.Equal(messages, tt.messages) || se.Total != len(tt.list) {
				t.Fatalf("SkippedError of %d items:\n  %s\nwant, of %d:\n  %s",
					se.Total, strings.Join(messages, "\n  "), len(tt.list), strings.Join(tt.messages, "\n  "))
			}
			if tt.known == nil && f.HasSynced() != (len(tt.want) == 0) {
				t.Fatalf("HasSynced %v before the %d queued keys were processed", f.HasSynced(), len(tt.want))
			}
			if got := drain(t, f); !slices.Equal(got, tt.want) {
				t.Fatalf("popped %q, want %q", got, tt.want)
			}
			if !f.HasSynced() {
				t.Fatal("HasSynced false once everything queued was processed")
			}
		})
	}
	t.Run("closed queue", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
		f.Close()
		if err := f.Replace([]*obj{a1, nilObj}, "1"); !errors.Is(err, ErrClosed) || errors.Is(err, ErrSkipped) {
			t.Fatalf("Replace on a closed queue: %v, want ErrClosed only", err)
		}
	})
}

func TestSkippedErrorMessage(t *testing.T) {
	errs := make([]error, 5)
	for i := range errs {
		errs[i] = fmt.Errorf("e%d", i)
	}
	for _, tt := range []struct {
		n    int
		want string
	}{
		{1, "skipped 1 of 9 objects: e0"},
		{3, "skipped 3 of 9 objects: e0; e1; e2"},
		{5, "skipped 5 of 9 objects: e0; e1; e2; and 2 more"},
	} {
		if got := (&SkippedError{Errs: errs[:tt.n], Total: 9}).Error(); got != tt.want {
			t.Errorf("%d errors: %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestDeltaFIFOPopWaitsAndHonoursContextAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := f.Pop(ctx, func(string, Deltas[*obj], bool) error { return nil })
			errc <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("Pop after cancel: %v, want context.Canceled", err)
		}

		got := make(chan string, 1)
		go func() {
			ds, err := f.Pop(t.Context(), func(string, Deltas[*obj], bool) error { return nil })
			if err != nil {
				t.Error(err)
			}
			got <- describe(ds)
		}()
		synctest.Wait()
		if err := f.Add(newObj("ns", "a", "1")); err != nil {
			t.Fatal(err)
		}
		if d := <-got; d != "Added:ns/a@1" {
			t.Fatalf("blocked Pop got %q", d)
		}

		go func() {
			_, err := f.Pop(t.Context(), func(string, Deltas[*obj], bool) error { return nil })
			errc <- err
		}()
		synctest.Wait()
		f.Close()
		f.Close() // a second Close is harmless
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Fatalf("Pop after Close: %v, want ErrClosed", err)
		}
		if !f.IsClosed() {
			t.Fatal("IsClosed false after Close")
		}
		if err := f.Add(newObj("ns", "b", "1")); !errors.Is(err, ErrClosed) {
			t.Fatalf("Add after Close: %v, want ErrClosed", err)
		}
	})
}

func TestDeltaFIFOConcurrentPopsAreSerialized(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*obj]{})
		for i := range 20 {
			if err := f.Add(newObj("ns", fmt.Sprint(i), "1")); err != nil {
				t.Fatal(err)
			}
		}
		var inside, maxInside, processed atomic.Int32
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					_, err := f.Pop(t.Context(), func(string, Deltas[*obj], bool) error {
						n := inside.Add(1)
						if n > maxInside.Load() {
							maxInside.Store(n)
						}
						// Block on the fake clock: every other Pop gets to
						// run and would enter process if it could.
						time.Sleep(time.Second)
						inside.Add(-1)
						processed.Add(1)
						return nil
					})
					if err != nil {
						return
					}
				}
			})
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		f.Close()
		wg.Wait()
		if processed.Load() != 20 {
			t.Fatalf("processed %d keys, want 20", processed.Load())
		}
		if maxInside.Load() != 1 {
			t.Fatalf("%d process calls ran at once, want 1", maxInside.Load())
		}
	})
}

// keyBuilder gives MetaNamespaceKey's keys, and keys built before its
// buffer grew stay valid.
func TestKeyBuilderGivesMetaNamespaceKeys(t *testing.T) {
	var objs []*obj
	for i := range 200 {
		objs = append(objs, newObj(fmt.Sprint("ns-", i%3), strings.Repeat("n", 1+i/4), "1"))
	}
	objs = append(objs, newObj("", "cluster-scoped", "1"))
	var kb keyBuilder
	kb.b.Grow(keysSize(objs[:10])) // far too small: the buffer grows
	var keys []string
	for _, o := range objs {
		key, err := kb.key(o.ns, o.name)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key)
	}
	for i, o := range objs {
		if want, _ := MetaNamespaceKey(o); keys[i] != want {
			t.Fatalf("key %d = %q, want %q", i, keys[i], want)
		}
	}
	for _, o := range []*obj{newObj("ns", "", "1"), newObj("ns", "a/b", "1"), newObj("a/b", "c", "1")} {
		_, want := MetaNamespaceKey(o)
		if _, err := kb.key(o.ns, o.name); !errors.Is(err, ErrInvalidObject) || !strings.HasSuffix(err.Error(), want.Error()) {
			t.Errorf("key of %q/%q: %v, want %v", o.ns, o.name, err, want)
		}
	}
	if n := keysSize([]*obj{nil, newObj("ns", "abc", "1")}); n != 2*6*5/4 {
		t.Errorf("keysSize = %d", n)
	}
}

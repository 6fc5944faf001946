package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
)

func popFIFO(t *testing.T, f *FIFO[*obj]) []string {
	t.Helper()
	var out []string
	for f.Len() > 0 {
		o, err := f.Pop(context.Background(), func(*obj, bool) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s/%s@%s", o.ns, o.name, o.rv))
	}
	return out
}

func TestFIFORules(t *testing.T) {
	a1, a2, b1, c1 := newObj("ns", "a", "1"), newObj("ns", "a", "2"), newObj("ns", "b", "1"), newObj("ns", "c", "1")
	tests := []struct {
		name string
		ops  func(f *FIFO[*obj]) error
		want []string
	}{
		{"order of first add", func(f *FIFO[*obj]) error { return errors.Join(f.Add(a1), f.Add(b1)) }, []string{"ns/a@1", "ns/b@1"}},
		{"update replaces in place", func(f *FIFO[*obj]) error { return errors.Join(f.Add(a1), f.Add(b1), f.Update(a2)) }, []string{"ns/a@2", "ns/b@1"}},
		{"delete removes", func(f *FIFO[*obj]) error { return errors.Join(f.Add(a1), f.Add(b1), f.Delete(a2)) }, []string{"ns/b@1"}},
		{"re-add after delete goes to the back", func(f *FIFO[*obj]) error {
			return errors.Join(f.Add(a1), f.Add(b1), f.Delete(a1), f.Add(a2))
		}, []string{"ns/b@1", "ns/a@2"}},
		{"replace swaps the content", func(f *FIFO[*obj]) error {
			return errors.Join(f.Add(a1), f.Replace([]*obj{c1, b1}))
		}, []string{"ns/c@1", "ns/b@1"}},
		{"delete of an absent key does nothing", func(f *FIFO[*obj]) error { return f.Delete(a1) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFIFO(FIFOOptions[*obj]{})
			if err := tt.ops(f); err != nil {
				t.Fatal(err)
			}
			if got := names(f.List()); !slices.Equal(got, sorted(tt.want)) {
				t.Errorf("List = %v, want %v", got, sorted(tt.want))
			}
			if got := popFIFO(t, f); !slices.Equal(got, tt.want) {
				t.Errorf("popped %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFIFOManyDeletesCompact(t *testing.T) {
	f := NewFIFO(FIFOOptions[*obj]{})
	for i := range 1000 {
		o := newObj("ns", fmt.Sprint(i), "1")
		if err := errors.Join(f.Add(o), f.Delete(o), f.Add(o)); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := f.Delete(o); err != nil {
				t.Fatal(err)
			}
		}
	}
	if f.queue.len() > 2*f.Len()+65 {
		t.Fatalf("queue holds %d slots for %d keys: stale slots not compacted", f.queue.len(), f.Len())
	}
	got := popFIFO(t, f)
	if len(got) != 500 || got[0] != "ns/1@1" || got[499] != "ns/999@1" {
		t.Fatalf("popped %d keys, first %q last %q", len(got), got[0], got[len(got)-1])
	}
}

func TestFIFOHasSyncedAndRequeue(t *testing.T) {
	f := NewFIFO(FIFOOptions[*obj]{})
	if f.HasSynced() {
		t.Fatal("HasSynced true before any write")
	}
	if err := f.Replace([]*obj{newObj("ns", "a", "1"), newObj("ns", "b", "1")}); err != nil {
		t.Fatal(err)
	}
	_, err := f.Pop(context.Background(), func(o *obj, initial bool) error {
		if !initial {
			t.Error("isInInitialList false for a listed object")
		}
		return fmt.Errorf("later: %w", ErrRequeue)
	})
	if !errors.Is(err, ErrRequeue) {
		t.Fatalf("Pop err = %v, want ErrRequeue", err)
	}
	if got := f.ListKeys(); !slices.Equal(got, []string{"ns/b", "ns/a"}) {
		t.Fatalf("after requeue ListKeys = %v, want [ns/b ns/a]", got)
	}
	// A second Replace keeps the pending initial key a, and drops b.
	if err := f.Replace([]*obj{newObj("ns", "a", "2"), newObj("ns", "c", "1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Pop(context.Background(), func(*obj, bool) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !f.HasSynced() {
		t.Fatal("HasSynced false after every initial object was processed")
	}
	// A requeue loses to a newer object queued meanwhile.
	_, err = f.Pop(context.Background(), func(o *obj, _ bool) error {
		if err := f.Add(newObj("ns", "c", "2")); err != nil {
			t.Error(err)
		}
		return ErrRequeue
	})
	if !errors.Is(err, ErrRequeue) {
		t.Fatal(err)
	}
	if got := popFIFO(t, f); !slices.Equal(got, []string{"ns/c@2"}) {
		t.Fatalf("popped %v, want [ns/c@2]", got)
	}
}

func TestFIFOBadInputAndReads(t *testing.T) {
	var nilObj *obj
	f := NewFIFO(FIFOOptions[*obj]{})
	if err := f.Add(newObj("ns", "a", "1")); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{f.Add(nilObj), f.Update(nilObj), f.Delete(nilObj), f.Replace([]*obj{nilObj})} {
		if !errors.Is(err, ErrInvalidObject) {
			t.Errorf("err = %v, want ErrInvalidObject", err)
		}
	}
	if _, _, err := f.Get(nilObj); !errors.Is(err, ErrInvalidObject) {
		t.Errorf("Get(nil) err = %v", err)
	}
	if got, ok, err := f.Get(newObj("ns", "a", "")); err != nil || !ok || got.rv != "1" {
		t.Fatalf("Get = %v, %v, %v", got, ok, err)
	}
	if got := f.ListKeys(); !slices.Equal(got, []string{"ns/a"}) {
		t.Fatalf("ListKeys = %v (want unchanged [ns/a])", got)
	}
}

func TestFIFOPopHonoursContextAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewFIFO(FIFOOptions[*obj]{})
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := f.Pop(ctx, func(*obj, bool) error { return nil })
			errc <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("Pop err = %v, want context.Canceled", err)
		}
		go func() {
			o, err := f.Pop(t.Context(), func(*obj, bool) error { return nil })
			if err == nil && o.name != "a" {
				err = fmt.Errorf("popped %v", o)
			}
			errc <- err
		}()
		synctest.Wait()
		if err := f.Add(newObj("ns", "a", "1")); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		go func() {
			_, err := f.Pop(t.Context(), func(*obj, bool) error { return nil })
			errc <- err
		}()
		synctest.Wait()
		f.Close()
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Fatalf("Pop err = %v, want ErrClosed", err)
		}
		if err := f.Add(newObj("ns", "b", "1")); !errors.Is(err, ErrClosed) || !f.IsClosed() {
			t.Fatalf("Add after Close = %v, IsClosed = %v", err, f.IsClosed())
		}
	})
}

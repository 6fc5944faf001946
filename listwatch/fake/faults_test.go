package fake_test

import (
	"errors"
	"io"
	"strconv"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// result is what one call to Next returned.
type result struct {
	ev  listwatch.Event[*corev1.ConfigMap]
	err error
}

// nextAsync calls w.Next on a new goroutine and returns where its result
// arrives. The goroutine exits once Next returns; closing w makes it return.
func nextAsync(w listwatch.Watch[*corev1.ConfigMap]) <-chan result {
	got := make(chan result, 1)
	go func() {
		ev, err := w.Next()
		got <- result{ev, err}
	}()
	return got
}

func TestFakeDroppedLastChangeWakesBlockedReaderWithExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSource(t, fake.Options[*corev1.ConfigMap]{})
		w, err := s.Watch(t.Context(), listwatch.Options{ResourceVersion: s.ResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		got := nextAsync(w)
		synctest.Wait() // the reader is blocked in Next on an empty stream
		s.DropNextEvent()
		mustCreate(t, s, "dropped") // the last change: no write follows it
		synctest.Wait()
		select {
		case r := <-got:
			if r.err != nil || r.ev.Type != listwatch.Error || !errors.Is(r.ev.Err, listwatch.ErrExpired) {
				t.Fatalf("after the dropped change: %+v, %v; want an Error event with ErrExpired", r.ev, r.err)
			}
		default:
			t.Fatal("reader still blocked in Next after the dropped change")
		}
	})
}

func TestFakeBatchQueuesEveryChangeBeforeTheReaderWakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSource(t, fake.Options[*corev1.ConfigMap]{})
		mustCreate(t, s, "kept")
		before := s.ResourceVersion()
		w := openAt(t, s, before)
		got := nextAsync(w)
		synctest.Wait() // the reader is blocked in Next on an empty stream
		s.DropNextEvent()
		err := s.Batch(func(b fake.Batch[*corev1.ConfigMap]) error {
			if _, err := b.Create(cm("x")); err != nil { // dropped
				return err
			}
			if _, err := b.Delete("ns", "x"); err != nil { // delivered, then 410
				return err
			}
			_, err := b.Create(cm("kept")) // fails: the key is taken
			return err
		})
		if !errors.Is(err, fake.ErrExists) {
			t.Fatalf("Batch: %v, want the failed write's ErrExists", err)
		}
		r := <-got
		if r.err != nil || r.ev.Type != listwatch.Deleted || r.ev.Object.Name != "x" {
			t.Fatalf("after the dropped create: %+v, %v; want the delete of x", r.ev, r.err)
		}
		if ev := next(t, w); ev.Type != listwatch.Error || !errors.Is(ev.Err, listwatch.ErrExpired) {
			t.Fatalf("after the gap: %+v; want an Error event with ErrExpired", ev)
		}
		// The writes before the failed one stay.
		if got, want := s.ResourceVersion(), versionAfter(t, before, 2); got != want {
			t.Errorf("resource version %s after the batch, want %s (two writes after %s)", got, want, before)
		}
		if _, ok := s.Get("ns", "x"); ok {
			t.Error("x still stored after its delete")
		}
	})
}

func TestFakeFaultFiredWithNoWatchOpenHitsTheNextWatch(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		fire func(*fake.Source[*corev1.ConfigMap])
		// check reads the next watch, opened after the fault and followed
		// by the creation of "a".
		check func(t *testing.T, w listwatch.Watch[*corev1.ConfigMap])
	}{
		{"reset", (*fake.Source[*corev1.ConfigMap]).ResetWatches, func(t *testing.T, w listwatch.Watch[*corev1.ConfigMap]) {
			if _, err := w.Next(); !errors.Is(err, listwatch.ErrUnavailable) {
				t.Fatalf("Next: %v, want ErrUnavailable", err)
			}
		}},
		{"close", (*fake.Source[*corev1.ConfigMap]).CloseWatches, func(t *testing.T, w listwatch.Watch[*corev1.ConfigMap]) {
			if _, err := w.Next(); err != io.EOF {
				t.Fatalf("Next: %v, want io.EOF", err)
			}
		}},
		{"drop", (*fake.Source[*corev1.ConfigMap]).DropNextEvent, func(t *testing.T, w listwatch.Watch[*corev1.ConfigMap]) {
			if ev := next(t, w); ev.Type != listwatch.Error || !errors.Is(ev.Err, listwatch.ErrExpired) {
				t.Fatalf("after the dropped change: %+v", ev)
			}
		}},
		{"error event", func(s *fake.Source[*corev1.ConfigMap]) { s.SendError(boom) }, func(t *testing.T, w listwatch.Watch[*corev1.ConfigMap]) {
			if ev := next(t, w); ev.Type != listwatch.Error || ev.Err != boom {
				t.Fatalf("Next: %+v, want the Error event", ev)
			}
		}},
		{"wrong type", func(s *fake.Source[*corev1.ConfigMap]) { s.InjectWrongType("*v1.Secret") }, func(t *testing.T, w listwatch.Watch[*corev1.ConfigMap]) {
			if _, err := w.Next(); !errors.Is(err, listwatch.ErrWrongType) {
				t.Fatalf("Next: %v, want ErrWrongType", err)
			}
			if ev := next(t, w); ev.Type != listwatch.Added || ev.Object.Name != "a" {
				t.Fatalf("after the wrong type: %+v", ev)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newSource(t, fake.Options[*corev1.ConfigMap]{})
				tc.fire(s) // no watch open
				before := s.Stats()
				w := openAt(t, s, s.ResourceVersion())
				mustCreate(t, s, "a")
				tc.check(t, w)
				if got, want := s.Stats().Faults(), before.Faults()+1; got != want {
					t.Errorf("fault counters sum to %d, want %d", got, want)
				}
				// The fault was held for one watch only.
				w = openAt(t, s, s.ResourceVersion())
				mustCreate(t, s, "b")
				if ev := next(t, w); ev.Type != listwatch.Added || ev.Object.Name != "b" {
					t.Fatalf("second watch: %+v, want Added b", ev)
				}
			})
		})
	}
}

func TestFakeHeldFaultWaitsForAWatchThatCanTakeIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSource(t, fake.Options[*corev1.ConfigMap]{})
		mustCreate(t, s, "a")
		// The only open watch already ends with an Error event: it cannot
		// drop a change, so the drop is held.
		ending := openAt(t, s, s.ResourceVersion())
		s.SendError(errors.New("boom"))
		s.DropNextEvent()
		s.DropNextEvent() // already held: changes nothing
		if ev := next(t, ending); ev.Type != listwatch.Error {
			t.Fatalf("ending watch: %+v", ev)
		}
		// A refused call, a watch closed early and a watch from a compacted
		// version take no fault either.
		s.RefuseNext(1)
		if _, err := s.Watch(t.Context(), listwatch.Options{ResourceVersion: s.ResourceVersion()}); !errors.Is(err, listwatch.ErrUnavailable) {
			t.Fatalf("refused watch: %v", err)
		}
		s.CloseNextWatches(1)
		if _, err := openAt(t, s, s.ResourceVersion()).Next(); err != io.EOF {
			t.Fatalf("early close: %v", err)
		}
		mustCreate(t, s, "b")
		s.Compact()
		if ev := next(t, openAt(t, s, "1")); !errors.Is(ev.Err, listwatch.ErrExpired) {
			t.Fatalf("compacted watch: %+v", ev)
		}
		// The first watch that streams takes the drop, and only it.
		w := openAt(t, s, s.ResourceVersion())
		mustCreate(t, s, "dropped")
		if ev := next(t, w); ev.Type != listwatch.Error || !errors.Is(ev.Err, listwatch.ErrExpired) {
			t.Fatalf("after the dropped change: %+v", ev)
		}
		w = openAt(t, s, s.ResourceVersion())
		mustCreate(t, s, "kept")
		if ev := next(t, w); ev.Object.Name != "kept" {
			t.Fatalf("next watch: %+v, want kept", ev)
		}
		if st := s.Stats(); st.Drops != 1 {
			t.Fatalf("drops: %d, want 1", st.Drops)
		}
	})
}

func TestFakeHeldFaultsApplyInTheOrderFired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSource(t, fake.Options[*corev1.ConfigMap]{})
		boom := errors.New("boom")
		s.InjectWrongType("*v1.Secret")
		s.ResetWatches()
		s.SendError(boom)
		// First watch: the wrong type, then the reset ends it.
		w := openAt(t, s, s.ResourceVersion())
		if _, err := w.Next(); !errors.Is(err, listwatch.ErrUnavailable) {
			t.Fatalf("first watch: %v, want the reset (it drops the unread wrong type)", err)
		}
		// Second watch: the error event, which could not go to an ended watch.
		w = openAt(t, s, s.ResourceVersion())
		if ev := next(t, w); ev.Err != boom {
			t.Fatalf("second watch: %+v, want the Error event", ev)
		}
		w = openAt(t, s, s.ResourceVersion())
		mustCreate(t, s, "a")
		if ev := next(t, w); ev.Object.Name != "a" {
			t.Fatalf("third watch: %+v", ev)
		}
	})
}

// versionAfter is the resource version n writes after rv.
func versionAfter(t *testing.T, rv string, n int64) string {
	t.Helper()
	v, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(v+n, 10)
}

// openAt opens a watch from version rv, closed when the test ends.
func openAt(t *testing.T, s *fake.Source[*corev1.ConfigMap], rv string) listwatch.Watch[*corev1.ConfigMap] {
	t.Helper()
	w, err := s.Watch(t.Context(), listwatch.Options{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

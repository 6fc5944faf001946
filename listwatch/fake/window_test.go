package fake_test

import (
	"errors"
	"io"
	"maps"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// TestFakeCompactionWindowKeepsExactlyTheWindow runs random writes (and the
// odd Compact) against a model of every past state, and checks after each
// write: a watch or an exact list from just before the compaction point
// answers expired; a watch from any version in the window replays exactly
// the changes after it; an exact list at any such version is that state.
func TestFakeCompactionWindowKeepsExactlyTheWindow(t *testing.T) {
	for _, window := range []int64{1, 7, 64} {
		t.Run("window="+strconv.FormatInt(window, 10), func(t *testing.T) {
			checkWindow(t, window, 600)
		})
	}
}

// modelChange is one logged change as a watcher must see it.
type modelChange struct {
	typ  listwatch.EventType
	name string
	data string
}

func checkWindow(t *testing.T, window int64, writes int) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(uint64(window), 1))
	s := newSource(t, fake.Options[*corev1.ConfigMap]{CompactionWindow: window})
	// states[v] is the truth at version v (name to data); changes[v] the
	// change that made version v.
	states := map[int64]map[string]string{1: {}}
	changes := map[int64]modelChange{}
	rv, base := int64(1), int64(1)
	for i := range writes {
		if rng.IntN(50) == 0 {
			s.Compact()
			base = rv
		}
		cur := maps.Clone(states[rv])
		name := "o" + strconv.Itoa(rng.IntN(6))
		data := strconv.Itoa(i)
		obj := cm(name)
		obj.Data = map[string]string{"v": data}
		var c modelChange
		var err error
		switch _, exists := cur[name]; {
		case !exists:
			_, err = s.Create(obj)
			c = modelChange{listwatch.Added, name, data}
			cur[name] = data
		case rng.IntN(3) == 0:
			_, err = s.Delete("ns", name)
			c = modelChange{listwatch.Deleted, name, cur[name]}
			delete(cur, name)
		default:
			_, err = s.Update(obj)
			c = modelChange{listwatch.Modified, name, data}
			cur[name] = data
		}
		if err != nil {
			t.Fatal(err)
		}
		rv++
		states[rv], changes[rv] = cur, c
		base = max(base, rv-window)

		if base > 1 {
			expiredAt(t, s, base-1)
		}
		v := base + rng.Int64N(rv-base+1)
		replaysFrom(t, s, v, rv, changes)
		p, err := s.List(ctx, listwatch.Options{ResourceVersion: strconv.FormatInt(v, 10), ResourceVersionMatch: listwatch.MatchExact})
		if err != nil {
			t.Fatalf("rv %d: exact list at %d (base %d): %v", rv, v, base, err)
		}
		got := map[string]string{}
		for _, o := range p.Items {
			got[o.Name] = o.Data["v"]
		}
		if !maps.Equal(got, states[v]) {
			t.Fatalf("rv %d: exact list at %d: %v, want %v", rv, v, got, states[v])
		}
	}
}

// expiredAt checks that version v is compacted, for a watch and a list.
func expiredAt(t *testing.T, s *fake.Source[*corev1.ConfigMap], v int64) {
	t.Helper()
	rv := strconv.FormatInt(v, 10)
	if _, err := s.List(t.Context(), listwatch.Options{ResourceVersion: rv, ResourceVersionMatch: listwatch.MatchExact}); !errors.Is(err, listwatch.ErrExpired) {
		t.Fatalf("exact list at compacted %d: %v, want ErrExpired", v, err)
	}
	w, err := s.Watch(t.Context(), listwatch.Options{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if ev := next(t, w); ev.Type != listwatch.Error || !errors.Is(ev.Err, listwatch.ErrExpired) {
		t.Fatalf("watch from compacted %d: %+v, want ErrExpired", v, ev)
	}
	if _, err := w.Next(); err != io.EOF {
		t.Fatalf("watch from compacted %d after the Error event: %v", v, err)
	}
}

// replaysFrom checks that a watch from v replays the changes v+1..rv.
func replaysFrom(t *testing.T, s *fake.Source[*corev1.ConfigMap], v, rv int64, changes map[int64]modelChange) {
	t.Helper()
	w, err := s.Watch(t.Context(), listwatch.Options{ResourceVersion: strconv.FormatInt(v, 10)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for want := v + 1; want <= rv; want++ {
		ev := next(t, w)
		c := changes[want]
		if ev.Type != c.typ || ev.Object.Name != c.name || ev.Object.Data["v"] != c.data || ev.ResourceVersion != strconv.FormatInt(want, 10) {
			t.Fatalf("watch from %d: %s %s=%s at %s, want %s %s=%s at %d",
				v, ev.Type, ev.Object.Name, ev.Object.Data["v"], ev.ResourceVersion, c.typ, c.name, c.data, want)
		}
	}
}

// TestFakeWriteAllocatesIndependentlyOfCompactionWindow: a window of
// 50,000 versions holds some 3 MB of history; a write that copied it would
// allocate that much. Allowed: the occasional growth of the log, a few KB
// per write amortized. (Bytes, not time: deterministic on a busy machine.)
func TestFakeWriteAllocatesIndependentlyOfCompactionWindow(t *testing.T) {
	const writes = 200
	perWrite := func(window int64) uint64 {
		s := newSource(t, fake.Options[*corev1.ConfigMap]{CompactionWindow: window})
		obj := cm("a")
		mustCreate(t, s, "a")
		for range window { // fill the window
			if _, err := s.Update(obj); err != nil {
				t.Fatal(err)
			}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range writes {
			if _, err := s.Update(obj); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / writes
	}
	small, large := perWrite(10), perWrite(50_000)
	if large > small+64<<10 {
		t.Fatalf("a write allocates %d bytes with a window of 50,000, %d with 10", large, small)
	}
}

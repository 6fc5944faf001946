package reflector_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/reflector"
)

// relistWhileDown changes the source while the watch is down (an update,
// a delete, a create) and compacts its history, so the watch cannot resume
// and the relist (at the last version, then, refused, at "") keeps,
// changes, adds and deletes objects.
func relistWhileDown(h *harness) {
	h.t.Helper()
	h.src.ResetWatches()
	b, _ := h.src.Get("ns", "b")
	b = b.DeepCopy()
	b.Data = map[string]string{"k": "v"}
	if _, err := h.src.Update(b); err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.src.Delete("ns", "c"); err != nil {
		h.t.Fatal(err)
	}
	h.create("e")
	h.src.Compact()
	h.pass(time.Minute)
}

// A paged relist goes to the store page by page as the pages arrive, and
// its end deletes what it did not list; the first list stays a Replace.
func TestReflectorAppliesPagedRelistAsItArrives(t *testing.T) {
	opts := plain
	opts.PageSize = 2
	runIncremental(t, fake.Options[obj]{}, opts, func(h *harness) { h.create("a", "b", "c", "d") }, func(h *harness) {
		h.converged()
		relistWhileDown(h)
		h.converged()
		s := h.store
		if s.count("replace") != 1 || s.count("apply") != 2 || s.count("finish") != 1 {
			t.Fatalf("store calls %v, want the first list replaced and the relist's 2 pages applied then finished", s.calls)
		}
	})
}

// countingWriter is a store wrapped by code that only wanted to see the
// adds: it embeds the store's Writer, so relists still reach the store's
// sessions (a store without BeginRelist would not compile as a Writer).
type countingWriter struct {
	cache.Writer[obj]
	adds int
}

func (w *countingWriter) Add(o obj) error {
	w.adds++
	return w.Writer.Add(o)
}

// A wrapped store keeps one-copy relists: the relist after an expired
// watch (5 objects in pages of 2) still goes to the store's session page
// by page.
func TestReflectorRelistsInPlaceThroughAWrappedStore(t *testing.T) {
	opts := plain
	opts.PageSize = 2
	var w *countingWriter
	wrap := func(s cache.Writer[obj]) cache.Writer[obj] {
		w = &countingWriter{Writer: s}
		return w
	}
	runWith(t, true, wrap, fake.Options[obj]{}, opts, func(h *harness) { h.create("a", "b", "c", "d") }, func(h *harness) {
		h.converged()
		h.create("x")
		h.settle()
		relistWhileDown(h)
		h.converged()
		s := h.store
		if s.count("begin") == 0 || s.count("apply") < 3 || s.count("finish") != 1 || s.count("replace") != 1 || w.adds != 1 {
			t.Fatalf("store calls %v, wrapper saw %d adds; want the relist applied in pages through the wrapper, and its one add",
				s.calls, w.adds)
		}
	})
}

// A continue token that expires mid-relist voids the pages applied so
// far: the full list that follows starts a new session, whose end deletes
// an object the first pages had listed.
func TestReflectorRestartsRelistWhenContinueTokenExpires(t *testing.T) {
	var src *fake.Source[obj]
	expire := false
	srcOpts := fake.Options[obj]{OnList: func(o listwatch.Options) error {
		if expire && o.Continue != "" {
			expire = false
			if _, err := src.Delete("ns", "a"); err != nil { // listed on the first page
				return err
			}
			src.Compact()
		}
		return nil
	}}
	opts := plain
	opts.PageSize = 2
	runIncremental(t, srcOpts, opts, func(h *harness) { src = h.src; h.create("a", "b", "c", "d") }, func(h *harness) {
		h.converged()
		expire = true
		relistWhileDown(h)
		h.converged()
		if _, ok := h.store.objs["ns/a"]; ok {
			t.Fatal("an object deleted after the first page survived the relist")
		}
		s := h.store
		if s.count("apply") != 2 || s.count("finish") != 1 {
			t.Fatalf("store calls %v, want a first page applied, then the full list, then one finish", s.calls)
		}
	})
}

// failOnPage fails the list call that asks for a continuation while fail
// is set.
type failOnPage struct {
	*fake.Source[obj]
	fail bool
}

var errPage = errors.New("page lost")

func (f *failOnPage) List(ctx context.Context, o listwatch.Options) (listwatch.Page[obj], error) {
	if f.fail && o.Continue != "" {
		f.fail = false
		return listwatch.Page[obj]{}, errPage
	}
	return f.Source.List(ctx, o)
}

// A relist that fails midway is aborted: nothing is deleted for it, what
// it applied stays, and the next relist converges.
func TestReflectorAbortsFailedRelist(t *testing.T) {
	var f *failOnPage
	runIncremental(t, fake.Options[obj]{}, plain, func(h *harness) {
		h.create("a", "b", "c", "d")
		f = &failOnPage{Source: h.src}
		var err error
		h.r, err = reflector.New(reflector.Options[obj]{Source: f, Store: h.store, ErrorHandler: h.errs.handle,
			Settings: reflector.Settings{Streaming: reflector.StreamingOff, PageSize: 2}})
		if err != nil {
			t.Fatal(err)
		}
	}, func(h *harness) {
		h.converged()
		f.fail = true
		relistWhileDown(h)
		h.converged()
		s := h.store
		if s.count("apply") != 3 || s.count("finish") != 1 || len(h.errs.find(listwatch.PhaseList, errPage)) != 1 {
			t.Fatalf("store calls %v, errors %v: want one relist aborted on the lost page, then one finished", s.calls, h.errs.errs)
		}
	})
}

// A store that fails a page fails the relist, which is retried.
func TestReflectorRetriesRelistWhenStoreFailsAPage(t *testing.T) {
	errFull := errors.New("store full")
	runIncremental(t, fake.Options[obj]{}, plain, func(h *harness) { h.create("a", "b", "c", "d") }, func(h *harness) {
		h.converged()
		h.store.setReplaceErr(errFull)
		relistWhileDown(h)
		if len(h.errs.find(listwatch.PhaseList, errFull)) == 0 || h.store.count("abort") == 0 {
			t.Fatalf("store calls %v, errors %v", h.store.calls, h.errs.errs)
		}
		h.store.setReplaceErr(nil)
		h.pass(time.Minute)
		h.converged()
	})
}

// A streaming relist goes to the store event by event, and its end
// bookmark finishes the session.
func TestReflectorAppliesStreamingRelistAsItArrives(t *testing.T) {
	runIncremental(t, fake.Options[obj]{}, reflector.Options[obj]{}, func(h *harness) { h.create("a", "b", "c", "d") }, func(h *harness) {
		h.converged()
		relistWhileDown(h)
		h.converged()
		s := h.store
		if s.count("replace") != 1 || s.count("apply") != 4 || s.count("finish") != 1 {
			t.Fatalf("store calls %v, want the first list replaced and the relist's 4 objects applied then finished", s.calls)
		}
		if len(h.src.ListCalls()) != 0 {
			t.Fatalf("plain lists %+v, want streaming only", h.src.ListCalls())
		}
	})
}

// A relist whose first page carries no resource version applies nothing.
func TestReflectorAppliesNothingOfRelistWithoutVersion(t *testing.T) {
	var nv *noVersion
	runIncremental(t, fake.Options[obj]{}, plain, func(h *harness) {
		h.create("a", "b")
		nv = &noVersion{Source: h.src}
		h.r, _ = reflector.New(reflector.Options[obj]{Source: nv, Store: h.store, ErrorHandler: h.errs.handle,
			Settings: reflector.Settings{Streaming: reflector.StreamingOff}})
	}, func(h *harness) {
		h.converged()
		nv.strip = true
		h.src.SendError(listwatch.ErrExpired)
		h.pass(time.Minute)
		if h.store.count("apply") != 0 || h.store.count("finish") != 0 {
			t.Fatalf("store calls %v: a list without version was applied", h.store.calls)
		}
		if len(h.errs.find(listwatch.PhaseList, reflector.ErrMissingResourceVersion)) == 0 {
			t.Fatalf("errors: %v", h.errs.errs)
		}
	})
}

package reflector_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/reflector"
)

func TestReflectorStreamsListAndKeepsTheStream(t *testing.T) {
	run(t, fake.Options[obj]{}, reflector.Options[obj]{}, func(h *harness) { h.create("a", "b") }, func(h *harness) {
		h.converged()
		if len(h.src.ListCalls()) != 0 {
			t.Fatalf("plain lists: %+v", h.src.ListCalls())
		}
		w := h.src.WatchCalls()
		if len(w) != 1 || !w[0].SendInitialEvents || !w[0].AllowBookmarks ||
			w[0].ResourceVersionMatch != listwatch.MatchNotOlderThan || w[0].ResourceVersion != "" {
			t.Fatalf("watches: %+v", w)
		}
		if h.store.count("replace") != 1 || h.store.count("add") != 0 {
			t.Fatalf("store calls %v", h.store.calls)
		}
		h.create("c")
		h.settle()
		h.converged()
		if len(h.src.WatchCalls()) != 1 {
			t.Fatalf("the streaming list's watch was not reused: %+v", h.src.WatchCalls())
		}
		// A relist streams again from the last version seen.
		h.src.SendError(listwatch.ErrExpired)
		h.pass(time.Minute)
		w = h.src.WatchCalls()
		if len(w) != 2 || !w[1].SendInitialEvents || w[1].ResourceVersion != "4" {
			t.Fatalf("watches: %+v", w)
		}
		h.converged()
	})
}

func TestReflectorFallsBackToListWhenStreamingUnsupported(t *testing.T) {
	for _, tc := range []struct {
		mode        reflector.StreamingMode
		wantStreams int
		// wantReported: refusals reported to the error handler. Auto
		// expects them of older servers and only logs them.
		wantReported int
	}{
		{reflector.StreamingAuto, 1, 0},
		{reflector.StreamingOn, 2, 2},
	} {
		t.Run("", func(t *testing.T) {
			opts := reflector.Options[obj]{Settings: reflector.Settings{Streaming: tc.mode}}
			run(t, fake.Options[obj]{StreamingListUnsupported: true}, opts, func(h *harness) { h.create("a") }, func(h *harness) {
				h.converged()
				if len(h.src.ListCalls()) != 1 {
					t.Fatalf("lists: %+v", h.src.ListCalls())
				}
				h.src.SendError(listwatch.ErrExpired)
				h.pass(time.Minute)
				h.converged()
				streams := 0
				for _, w := range h.src.WatchCalls() {
					if w.SendInitialEvents {
						streams++
					}
				}
				if streams != tc.wantStreams || len(h.src.ListCalls()) != 2 {
					t.Fatalf("%d streaming attempts (want %d), %d lists", streams, tc.wantStreams, len(h.src.ListCalls()))
				}
				if len(h.errs.find(listwatch.PhaseWatchStart, listwatch.ErrStreamingListUnsupported)) != tc.wantReported {
					t.Fatalf("errors %v", h.errs.errs)
				}
			})
		})
	}
}

func TestReflectorFallsBackToListWhenStreamEndsEarly(t *testing.T) {
	run(t, fake.Options[obj]{}, reflector.Options[obj]{}, func(h *harness) {
		h.create("a")
		h.src.CloseNextWatches(1)
	}, func(h *harness) {
		h.converged()
		if len(h.errs.find(listwatch.PhaseWatchStream, reflector.ErrInitialEventsIncomplete)) != 1 || len(h.src.ListCalls()) != 1 {
			t.Fatalf("lists %d errors %v", len(h.src.ListCalls()), h.errs.errs)
		}
	})
}

func TestReflectorListsLatestAfterStreamingVersionTooLarge(t *testing.T) {
	fail := true
	srcOpts := fake.Options[obj]{OnWatch: func(o listwatch.Options) error {
		if o.SendInitialEvents && o.ResourceVersion != "" && fail {
			fail = false
			return listwatch.ErrTooLargeResourceVersion
		}
		return nil
	}}
	run(t, srcOpts, reflector.Options[obj]{}, nil, func(h *harness) {
		h.src.SendError(listwatch.ErrExpired)
		h.pass(time.Minute)
		// The stream at the last version failed; the fallback list must
		// not ask for that version again.
		l := h.src.ListCalls()
		if len(l) != 1 || l[0].ResourceVersion != "" {
			t.Fatalf("lists: %+v", l)
		}
		h.converged()
	})
}

func TestReflectorSkipsAStreamedObjectItCannotKey(t *testing.T) {
	errBad := errors.New("no key for b")
	for _, tc := range []struct {
		name    string
		keyFunc func(obj) (string, error)
		bad     string // the object's name
		want    error
	}{
		{"default key", nil, "x/y", cache.ErrInvalidObject},
		{"own key", func(o obj) (string, error) {
			if o.Name == "b" {
				return "", errBad
			}
			return key(o), nil
		}, "b", errBad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := reflector.Options[obj]{KeyFunc: tc.keyFunc}
			// Incremental: the relist's adds go through a session one by one.
			runIncremental(t, fake.Options[obj]{}, opts, func(h *harness) { h.create("a") }, func(h *harness) {
				h.converged()
				h.create(tc.bad, "c")
				h.src.SendError(listwatch.ErrExpired)
				h.pass(time.Minute)
				if got := h.store.snapshot(); strings.Contains(got, tc.bad) || !strings.Contains(got, "ns/a@") || !strings.Contains(got, "ns/c@") {
					t.Fatalf("store %q, want a and c without %q", got, tc.bad)
				}
				errs := h.errs.find(listwatch.PhaseWatchStream, tc.want)
				if len(errs) == 0 || !strings.Contains(errs[0].Error(), "skipping ADDED of ns/"+tc.bad+": key") {
					t.Fatalf("errors %v, want the add of %s skipped for its key", h.errs.errs, tc.bad)
				}
			})
		})
	}
}

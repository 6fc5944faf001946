package reflector_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/reflector"
)

// pass lets fake time run for d, then lets everything settle.
func (h *harness) pass(d time.Duration) {
	time.Sleep(d)
	h.settle()
}

func TestReflectorListsAtZeroThenWatchesFromListVersion(t *testing.T) {
	run(t, fake.Options[obj]{}, plain, func(h *harness) { h.create("a", "b") }, func(h *harness) {
		h.converged()
		lists, watches := h.src.ListCalls(), h.src.WatchCalls()
		if len(lists) != 1 || lists[0].ResourceVersion != "0" {
			t.Fatalf("lists: %+v", lists)
		}
		if len(watches) != 1 {
			t.Fatalf("watches: %+v", watches)
		}
		w := watches[0]
		if w.ResourceVersion != "3" || !w.AllowBookmarks || w.SendInitialEvents {
			t.Fatalf("watch options: %+v", w)
		}
		if w.TimeoutSeconds < 300 || w.TimeoutSeconds > 600 {
			t.Fatalf("watch timeout %ds outside [300, 600]", w.TimeoutSeconds)
		}
		h.create("c")
		if _, err := h.src.Update(cm("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := h.src.Delete("ns", "b"); err != nil {
			t.Fatal(err)
		}
		h.settle()
		h.converged()
		if h.store.count("add") != 1 || h.store.count("update") != 1 || h.store.count("delete") != 1 {
			t.Fatalf("store calls %v", h.store.calls)
		}
		if h.errs.len() != 0 {
			t.Fatalf("errors: %v", h.errs.errs)
		}
	})
}

func TestReflectorRandomizesWatchTimeout(t *testing.T) {
	opts := plain
	opts.MinWatchTimeout, opts.MaxWatchTimeout = time.Minute, 2*time.Minute
	run(t, fake.Options[obj]{}, opts, nil, func(h *harness) {
		seen := map[int64]bool{}
		for range 20 {
			h.pass(2 * time.Second) // not a very short watch
			h.src.CloseWatches()
			h.settle()
		}
		for _, w := range h.src.WatchCalls() {
			if w.TimeoutSeconds < 60 || w.TimeoutSeconds > 120 {
				t.Fatalf("timeout %d outside [60, 120]", w.TimeoutSeconds)
			}
			seen[w.TimeoutSeconds] = true
		}
		if len(seen) < 2 {
			t.Fatalf("21 watches, timeouts not randomized: %v", seen)
		}
	})
}

func TestReflectorRelistsAtEmptyVersionWhenListVersionUnavailable(t *testing.T) {
	for _, cause := range []error{listwatch.ErrExpired, listwatch.ErrTooLargeResourceVersion} {
		t.Run(cause.Error(), func(t *testing.T) {
			srcOpts := fake.Options[obj]{OnList: func(o listwatch.Options) error {
				if o.ResourceVersion == "0" {
					return cause
				}
				return nil
			}}
			run(t, srcOpts, plain, func(h *harness) { h.create("a") }, func(h *harness) {
				h.converged()
				lists := h.src.ListCalls()
				if len(lists) != 2 || lists[1].ResourceVersion != "" {
					t.Fatalf("lists: %+v", lists)
				}
				if len(h.errs.find(listwatch.PhaseList, cause)) != 1 {
					t.Fatalf("errors: %v", h.errs.errs)
				}
			})
		})
	}
}

func TestReflectorRelistsFromLastVersionAfterExpiredWatch(t *testing.T) {
	run(t, fake.Options[obj]{}, plain, func(h *harness) { h.create("a") }, func(h *harness) {
		h.create("b")
		h.settle()
		h.src.SendError(listwatch.ErrExpired)
		h.pass(time.Minute)
		h.converged()
		lists := h.src.ListCalls()
		if len(lists) != 2 || lists[1].ResourceVersion != "3" {
			t.Fatalf("lists: %+v", lists)
		}
		if len(h.errs.find(listwatch.PhaseWatchStream, listwatch.ErrExpired)) != 1 {
			t.Fatalf("errors: %v", h.errs.errs)
		}
	})
}

func TestReflectorRelistsAfterCompactionForcesGone(t *testing.T) {
	opts := plain
	opts.PageSize = 1 // an exact read at the last version: compaction makes it 410
	run(t, fake.Options[obj]{}, opts, func(h *harness) { h.create("a", "b") }, func(h *harness) {
		h.src.ResetWatches()
		h.create("c")
		h.src.Compact()
		h.src.DropNextEvent()
		h.pass(time.Minute)
		h.converged()
	})
}

func TestReflectorFallsBackToFullListWhenContinueTokenExpires(t *testing.T) {
	var src *fake.Source[obj]
	srcOpts := fake.Options[obj]{OnList: func(o listwatch.Options) error {
		if o.Continue != "" && len(src.Objects()) == 3 {
			if _, err := src.Create(cm("d")); err != nil {
				return err
			}
			src.Compact() // the token's snapshot is gone
		}
		return nil
	}}
	opts := plain
	opts.PageSize = 2
	run(t, srcOpts, opts, func(h *harness) { src = h.src; h.create("a", "b", "c") }, func(h *harness) {
		h.converged()
		lists := h.src.ListCalls()
		if len(lists) != 3 || lists[0].Limit != 2 || lists[1].Continue == "" || lists[2].Limit != 0 || lists[2].ResourceVersion != "0" {
			t.Fatalf("lists: %+v", lists)
		}
	})
}

func TestReflectorRemembersPaginatedResult(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fromCache bool
		wantLimit int64
	}{
		{"paginated", false, reflector.DefaultPageSize},
		{"served whole from cache", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := plain // PageSize 0: the default rules
			seed := func(h *harness) {
				for i := range reflector.DefaultPageSize + 1 {
					h.create("o" + string(rune('a'+i/26/26%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i%26)))
				}
			}
			run(t, fake.Options[obj]{ServeZeroFromCache: tc.fromCache}, opts, seed, func(h *harness) {
				h.converged()
				h.src.SendError(listwatch.ErrExpired)
				h.pass(time.Minute)
				lists := h.src.ListCalls()
				last := lists[len(lists)-1]
				if last.ResourceVersion == "0" || last.Limit != tc.wantLimit {
					t.Fatalf("relist %+v, want limit %d", last, tc.wantLimit)
				}
				h.converged()
			})
		})
	}
}

// noVersion strips the resource version from every list page.
type noVersion struct {
	*fake.Source[obj]
	strip bool
}

func (n *noVersion) List(ctx context.Context, o listwatch.Options) (listwatch.Page[obj], error) {
	p, err := n.Source.List(ctx, o)
	if n.strip {
		p.ResourceVersion = ""
	}
	return p, err
}

func TestReflectorReportsListWithoutResourceVersion(t *testing.T) {
	run(t, fake.Options[obj]{}, plain, func(h *harness) {
		h.create("a")
		h.r, _ = reflector.New(reflector.Options[obj]{
			Source: &noVersion{Source: h.src, strip: true}, Store: h.store, ErrorHandler: h.errs.handle, Settings: reflector.Settings{Streaming: reflector.StreamingOff},
		})
	}, func(h *harness) {
		h.pass(time.Minute)
		if h.store.count("replace") != 0 || h.r.LastSyncResourceVersion() != "" {
			t.Fatalf("store replaced from a list without version: %v", h.store.calls)
		}
		if len(h.errs.find(listwatch.PhaseList, reflector.ErrMissingResourceVersion)) < 2 {
			t.Fatalf("errors: %v", h.errs.errs)
		}
	})
}

func TestReflectorBacksOffWithoutRelistWhenConnectionRefused(t *testing.T) {
	run(t, fake.Options[obj]{}, plain, func(h *harness) { h.create("a") }, func(h *harness) {
		h.src.RefuseNext(3)
		h.src.ResetWatches()
		h.settle()
		h.create("b")
		h.pass(time.Minute)
		h.converged()
		if n := len(h.src.ListCalls()); n != 1 {
			t.Fatalf("%d lists, want 1", n)
		}
		if n := len(h.src.WatchCalls()); n != 5 {
			t.Fatalf("%d watches, want 5 (first, 3 refused, last)", n)
		}
		if len(h.errs.find(listwatch.PhaseWatchStart, listwatch.ErrUnavailable)) != 3 ||
			len(h.errs.find(listwatch.PhaseWatchStream, listwatch.ErrUnavailable)) != 1 {
			t.Fatalf("errors: %v", h.errs.errs)
		}
	})
}

func TestReflectorBacksOffBeforeRetrying(t *testing.T) {
	run(t, fake.Options[obj]{}, plain, func(h *harness) { h.src.RefuseNext(1) }, func(h *harness) {
		if n := len(h.src.ListCalls()); n != 1 {
			t.Fatalf("%d lists before the back-off ran out, want 1", n)
		}
		h.pass(2 * time.Second) // the first delay is under 1.6 s
		if n := len(h.src.ListCalls()); n != 2 {
			t.Fatalf("%d lists after the back-off, want 2", n)
		}
		h.converged()
	})
}

func TestReflectorRelistsAfterVeryShortWatch(t *testing.T) {
	run(t, fake.Options[obj]{}, plain, func(h *harness) { h.src.CloseNextWatches(1) }, func(h *harness) {
		h.pass(time.Minute)
		if n := len(h.src.ListCalls()); n != 2 {
			t.Fatalf("%d lists, want 2", n)
		}
		if len(h.errs.find(listwatch.PhaseWatchStream, reflector.ErrVeryShortWatch)) != 1 {
			t.Fatalf("errors: %v", h.errs.errs)
		}
	})
}

func TestReflectorRewatchesWithoutRelistAfterCleanClose(t *testing.T) {
	run(t, fake.Options[obj]{}, plain, nil, func(h *harness) {
		h.pass(2 * time.Second) // old enough not to be a very short watch
		h.src.CloseWatches()
		h.create("a")
		h.settle()
		h.converged()
		if len(h.src.ListCalls()) != 1 || len(h.src.WatchCalls()) != 2 || h.errs.len() != 0 {
			t.Fatalf("lists %d watches %d errors %v", len(h.src.ListCalls()), len(h.src.WatchCalls()), h.errs.errs)
		}
	})
}

func TestReflectorSkipsEventsOfTheWrongType(t *testing.T) {
	run(t, fake.Options[obj]{}, plain, nil, func(h *harness) {
		h.src.InjectWrongType("*v1.Secret")
		h.create("a")
		h.settle()
		h.converged()
		if len(h.src.ListCalls()) != 1 || len(h.errs.find(listwatch.PhaseWatchStream, listwatch.ErrWrongType)) != 1 {
			t.Fatalf("lists %d errors %v", len(h.src.ListCalls()), h.errs.errs)
		}
	})
}

func TestReflectorReportsErrorEventAndRelists(t *testing.T) {
	boom := errors.New("boom")
	run(t, fake.Options[obj]{}, plain, nil, func(h *harness) {
		h.src.SendError(boom)
		h.create("a")
		h.pass(time.Minute)
		h.converged()
		if len(h.src.ListCalls()) != 2 || len(h.errs.find(listwatch.PhaseWatchStream, boom)) != 1 {
			t.Fatalf("lists %d errors %v", len(h.src.ListCalls()), h.errs.errs)
		}
	})
}

func TestReflectorBookmarksOnlyAdvanceVersion(t *testing.T) {
	hidden := fake.Options[obj]{Filter: func(o obj, _ listwatch.Options) bool { return o.Name != "hidden" }}
	run(t, hidden, plain, nil, func(h *harness) {
		h.create("hidden")
		h.settle()
		if h.r.LastSyncResourceVersion() != "1" {
			t.Fatalf("version %q", h.r.LastSyncResourceVersion())
		}
		h.src.Bookmark()
		h.settle()
		if h.r.LastSyncResourceVersion() != "2" || h.store.snapshot() != "" || h.store.count("add") != 0 {
			t.Fatalf("version %q store %q", h.r.LastSyncResourceVersion(), h.store.snapshot())
		}
		if h.store.count("bookmark") != 1 || h.store.version() != "2" {
			t.Fatalf("store told of %d bookmarks, at version %q; want 1, at 2", h.store.count("bookmark"), h.store.version())
		}
	})
}

func TestReflectorReportsStoreFailureAndRetries(t *testing.T) {
	errFull := errors.New("store full")
	run(t, fake.Options[obj]{}, plain, func(h *harness) { h.store.setReplaceErr(errFull) }, func(h *harness) {
		if len(h.errs.find(listwatch.PhaseList, errFull)) != 1 || len(h.src.WatchCalls()) != 0 {
			t.Fatalf("errors %v", h.errs.errs)
		}
		h.store.setReplaceErr(nil)
		h.pass(time.Minute)
		h.converged()
	})
}

func TestReflectorRelistsWhenWatchStartFails(t *testing.T) {
	for _, cause := range []error{listwatch.ErrExpired, listwatch.ErrTooLargeResourceVersion, errors.New("forbidden")} {
		t.Run(cause.Error(), func(t *testing.T) {
			fail := true
			srcOpts := fake.Options[obj]{OnWatch: func(listwatch.Options) error {
				if fail {
					fail = false
					return cause
				}
				return nil
			}}
			run(t, srcOpts, plain, nil, func(h *harness) {
				h.pass(time.Minute)
				if len(h.src.ListCalls()) != 2 || len(h.errs.find(listwatch.PhaseWatchStart, cause)) != 1 {
					t.Fatalf("lists %d errors %v", len(h.src.ListCalls()), h.errs.errs)
				}
			})
		})
	}
}

func TestReflectorRunsOnce(t *testing.T) {
	run(t, fake.Options[obj]{}, plain, nil, func(h *harness) {
		if err := h.r.Run(t.Context()); !errors.Is(err, reflector.ErrAlreadyRunning) {
			t.Fatalf("second Run: %v", err)
		}
	})
}

func TestNewRejectsIncompleteOptions(t *testing.T) {
	if _, err := reflector.New(reflector.Options[obj]{}); err == nil {
		t.Fatal("New without source and store succeeded")
	}
}

// nilInjector adds a nil object to every list page and sends a Modified
// event with a nil object first on every watch.
type nilInjector struct{ *fake.Source[obj] }

func (n nilInjector) List(ctx context.Context, o listwatch.Options) (listwatch.Page[obj], error) {
	p, err := n.Source.List(ctx, o)
	p.Items = append(p.Items, nil)
	return p, err
}

func (n nilInjector) Watch(ctx context.Context, o listwatch.Options) (listwatch.Watch[obj], error) {
	w, err := n.Source.Watch(ctx, o)
	if err != nil {
		return nil, err
	}
	return &nilFirst{Watch: w}, nil
}

type nilFirst struct {
	listwatch.Watch[obj]
	sent bool
}

func (w *nilFirst) Next() (listwatch.Event[obj], error) {
	if !w.sent {
		w.sent = true
		return listwatch.Event[obj]{Type: listwatch.Modified}, nil
	}
	return w.Watch.Next()
}

func TestReflectorSkipsNilObjects(t *testing.T) {
	run(t, fake.Options[obj]{}, plain, func(h *harness) {
		h.create("a")
		h.r, _ = reflector.New(reflector.Options[obj]{
			Source: nilInjector{h.src}, Store: h.store, ErrorHandler: h.errs.handle, Settings: reflector.Settings{Streaming: reflector.StreamingOff},
		})
	}, func(h *harness) {
		h.create("b")
		h.settle()
		h.converged()
		if len(h.errs.find(listwatch.PhaseList, reflector.ErrNilObject)) != 1 || len(h.errs.find(listwatch.PhaseWatchStream, reflector.ErrNilObject)) != 1 {
			t.Fatalf("errors %v", h.errs.errs)
		}
	})
}

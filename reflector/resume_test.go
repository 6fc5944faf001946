package reflector_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/reflector"
)

// resumeRun runs a reflector that resumes from the fake's state when
// setup returns (a checkpoint), after change has changed the fake (what
// happened while the process was down).
func resumeRun(t *testing.T, change func(h *harness), body func(h *harness, confirmed *atomic.Int32)) {
	var confirmed atomic.Int32
	opts := plain
	opts.Confirmed = func() { confirmed.Add(1) }
	var res reflector.Resume[obj]
	opts.Resume = func(context.Context) (*reflector.Resume[obj], error) { return &res, nil }
	run(t, fake.Options[obj]{}, opts, func(h *harness) {
		h.create("a", "b")
		items := h.src.Objects()
		res.Items = func(context.Context, bool) ([]obj, bool) { return items, true }
		res.ResourceVersion = h.src.ResourceVersion()
		change(h)
	}, func(h *harness) { body(h, &confirmed) })
}

// A resumed reflector does not list: it fills the store from the saved
// state and watches from its version, so the changes made meanwhile
// arrive as events; the server confirms the version with a one-object
// exact list.
func TestReflectorResumesFromASavedState(t *testing.T) {
	resumeRun(t, func(h *harness) {
		h.create("c")
		if _, err := h.src.Delete("ns", "b"); err != nil {
			t.Fatal(err)
		}
	}, func(h *harness, confirmed *atomic.Int32) {
		h.converged()
		lists := h.src.ListCalls()
		if len(lists) != 1 || lists[0].ResourceVersionMatch != listwatch.MatchExact || lists[0].Limit != 1 || lists[0].ResourceVersion != "3" {
			t.Fatalf("lists %+v, want one exact one-object list at the resumed version 3", lists)
		}
		w := h.src.WatchCalls()
		if len(w) != 1 || w[0].ResourceVersion != "3" {
			t.Fatalf("watches %+v, want one from 3", w)
		}
		if h.store.count("replace") != 1 || h.store.count("add") != 1 || h.store.count("delete") != 1 {
			t.Fatalf("store calls %v", h.store.calls)
		}
		if confirmed.Load() != 1 {
			t.Fatalf("Confirmed called %d times", confirmed.Load())
		}
	})
}

// A saved state older than the server's history is replaced by a relist
// at once (no back-off), and only then confirmed.
func TestReflectorRelistsWhenTheResumedVersionExpired(t *testing.T) {
	resumeRun(t, func(h *harness) {
		h.create("c")
		h.src.Compact()
	}, func(h *harness, confirmed *atomic.Int32) {
		h.converged()
		if h.store.count("replace") != 2 {
			t.Fatalf("store calls %v, want the saved state then the relist", h.store.calls)
		}
		if len(h.errs.find(listwatch.PhaseList, listwatch.ErrExpired)) == 0 {
			t.Fatalf("expired version not reported: %v", h.errs.errs)
		}
		if confirmed.Load() != 1 {
			t.Fatalf("Confirmed called %d times", confirmed.Load())
		}
	})
}

// Until the server answers, the resumed version is not confirmed, and
// nothing of the saved state reaches the store.
func TestReflectorConfirmsAResumeOnlyWhenTheServerAnswers(t *testing.T) {
	resumeRun(t, func(h *harness) { h.src.RefuseFor(time.Minute) }, func(h *harness, confirmed *atomic.Int32) {
		if confirmed.Load() != 0 || h.store.count("replace")+h.store.count("add") != 0 {
			t.Fatalf("confirmed %d times with the server refusing; store %v", confirmed.Load(), h.store.calls)
		}
		h.pass(2 * time.Minute)
		h.converged()
		if confirmed.Load() != 1 {
			t.Fatalf("Confirmed called %d times once the server answered", confirmed.Load())
		}
	})
}

// A saved state ahead of the server (a cluster restored from a backup,
// or another cluster's state) is dropped unseen: the store gets only the
// list, and the refusal is reported.
func TestReflectorRefusesAResumeTheServerIsBehind(t *testing.T) {
	var confirmed atomic.Int32
	opts := plain
	opts.Confirmed = func() { confirmed.Add(1) }
	var read, done atomic.Int32
	opts.Resume = func(context.Context) (*reflector.Resume[obj], error) {
		return &reflector.Resume[obj]{ResourceVersion: "99",
			Items: func(context.Context, bool) ([]obj, bool) { read.Add(1); return []obj{cm("ghost")}, true },
			Done:  func() { done.Add(1) }}, nil
	}
	run(t, fake.Options[obj]{}, opts, func(h *harness) { h.create("a") }, func(h *harness) {
		h.converged()
		if read.Load() != 0 || done.Load() != 1 {
			t.Fatalf("state read %d times, done %d times: want it dropped unread, done once", read.Load(), done.Load())
		}
		if h.store.count("replace") != 1 || strings.Contains(h.store.snapshot(), "ghost") {
			t.Fatalf("store calls %v, want the list only", h.store.calls)
		}
		if len(h.errs.find(listwatch.PhaseList, reflector.ErrResumeRefused)) != 1 {
			t.Fatalf("refusal not reported once: %v", h.errs.errs)
		}
		if confirmed.Load() != 1 {
			t.Fatalf("Confirmed called %d times", confirmed.Load())
		}
	})
}

// A Resume that fails (the server not answering yet) is asked again after
// a back-off; one that has no state starts a plain list.
func TestReflectorRetriesAFailedResume(t *testing.T) {
	var calls atomic.Int32
	opts := plain
	opts.Resume = func(context.Context) (*reflector.Resume[obj], error) {
		if calls.Add(1) < 3 {
			return nil, errors.New("cluster identity: connection refused")
		}
		return nil, nil
	}
	run(t, fake.Options[obj]{}, opts, func(h *harness) { h.create("a") }, func(h *harness) {
		h.pass(time.Minute)
		h.converged()
		if calls.Load() != 3 || h.store.count("replace") != 1 {
			t.Fatalf("Resume called %d times, store %v", calls.Load(), h.store.calls)
		}
		if len(h.errs.find(listwatch.PhaseList, nil)) < 2 {
			t.Fatalf("failed resumes not reported: %v", h.errs.errs)
		}
	})
}

// An expired state is read while the relist runs, not before it: the
// relist's request goes out while the state is still being read, and the
// store gets the state, then the list, so that it sees the differences.
func TestReflectorReadsAnExpiredStateWhileItRelists(t *testing.T) {
	var confirmed, done atomic.Int32
	var expiredArg atomic.Bool
	opts := plain
	opts.Confirmed = func() { confirmed.Add(1) }
	var res reflector.Resume[obj]
	opts.Resume = func(context.Context) (*reflector.Resume[obj], error) { return &res, nil }
	run(t, fake.Options[obj]{}, opts, func(h *harness) {
		h.create("a", "b")
		items := h.src.Objects()
		res.ResourceVersion = h.src.ResourceVersion()
		res.Items = func(ctx context.Context, expired bool) ([]obj, bool) {
			expiredArg.Store(expired)
			// Reading the state takes until the relist has been asked
			// for: a reflector that reads it before relisting never
			// gets there.
			for len(h.src.ListCalls()) < 2 {
				select {
				case <-ctx.Done():
					return nil, false
				case <-time.After(10 * time.Millisecond):
				}
			}
			return items, true
		}
		res.Done = func() { done.Add(1) }
		h.create("c")
		h.src.Compact()
	}, func(h *harness) {
		h.converged()
		if !expiredArg.Load() {
			t.Error("Items not told the version expired")
		}
		lists := h.src.ListCalls()
		if len(lists) != 2 || lists[1].ResourceVersion != "" {
			t.Fatalf("lists %+v, want the exact question then a consistent relist", lists)
		}
		// The state then the relist: the other way round, the store
		// would end with the state, without c.
		if h.store.count("replace") != 2 || h.store.count("add") != 0 {
			t.Fatalf("store calls %v, want the state, then the relist", h.store.calls)
		}
		if confirmed.Load() != 1 || done.Load() != 1 {
			t.Fatalf("Confirmed called %d times, Done %d times", confirmed.Load(), done.Load())
		}
	})
}

// A state whose objects cannot be trusted (Items says so once it has
// read them) never reaches the store: confirmed or expired, the store
// gets the server's list only.
func TestReflectorListsWhenAResumedStateCannotBeRead(t *testing.T) {
	for _, expire := range []bool{false, true} {
		t.Run(fmt.Sprintf("expired=%v", expire), func(t *testing.T) {
			var done atomic.Int32
			opts := plain
			var res reflector.Resume[obj]
			opts.Resume = func(context.Context) (*reflector.Resume[obj], error) { return &res, nil }
			run(t, fake.Options[obj]{}, opts, func(h *harness) {
				h.create("a")
				res.ResourceVersion = h.src.ResourceVersion()
				res.Items = func(context.Context, bool) ([]obj, bool) { return []obj{cm("ghost")}, false }
				res.Done = func() { done.Add(1) }
				h.create("b")
				if expire {
					h.src.Compact()
				}
			}, func(h *harness) {
				h.converged()
				if h.store.count("replace") != 1 || strings.Contains(h.store.snapshot(), "ghost") {
					t.Fatalf("store calls %v, want the list only", h.store.calls)
				}
				if done.Load() != 1 {
					t.Fatalf("Done called %d times", done.Load())
				}
			})
		})
	}
}

package reflector_test

import (
	"context"
	"errors"
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
		res.Items, res.ResourceVersion = h.src.Objects(), h.src.ResourceVersion()
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
	opts.Resume = func(context.Context) (*reflector.Resume[obj], error) {
		return &reflector.Resume[obj]{ResourceVersion: "99", Items: []obj{cm("ghost")}}, nil
	}
	run(t, fake.Options[obj]{}, opts, func(h *harness) { h.create("a") }, func(h *harness) {
		h.converged()
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

// resumeReadRun is resumeRun with the saved state's objects behind Read
// (a checkpoint's, read only when needed), which fails with readErr when
// set; reads counts its calls.
func resumeReadRun(t *testing.T, skipExpired bool, readErr error, change func(h *harness), body func(h *harness, confirmed, reads *atomic.Int32)) {
	var confirmed, reads atomic.Int32
	opts := plain
	opts.Confirmed = func() { confirmed.Add(1) }
	var items []obj
	res := reflector.Resume[obj]{SkipExpired: skipExpired, Read: func() ([]obj, error) {
		reads.Add(1)
		return items, readErr
	}}
	opts.Resume = func(context.Context) (*reflector.Resume[obj], error) { return &res, nil }
	run(t, fake.Options[obj]{}, opts, func(h *harness) {
		h.create("a", "b")
		items, res.ResourceVersion = h.src.Objects(), h.src.ResourceVersion()
		change(h)
	}, func(h *harness) { body(h, &confirmed, &reads) })
}

// A saved state's objects are read once, and only after the server has
// confirmed its version: not while it does not answer.
func TestReflectorReadsAResumedStateOnceTheServerConfirmsIt(t *testing.T) {
	resumeReadRun(t, false, nil, func(h *harness) { h.src.RefuseFor(time.Minute) }, func(h *harness, confirmed, reads *atomic.Int32) {
		if reads.Load() != 0 || h.store.count("replace") != 0 {
			t.Fatalf("read %d times with the server refusing; store %v", reads.Load(), h.store.calls)
		}
		h.pass(2 * time.Minute)
		h.converged()
		if reads.Load() != 1 || confirmed.Load() != 1 || h.store.count("replace") != 1 {
			t.Fatalf("read %d times, confirmed %d times; store %v", reads.Load(), confirmed.Load(), h.store.calls)
		}
		for _, l := range h.src.ListCalls() {
			if l.ResourceVersionMatch != listwatch.MatchExact || l.Limit != 1 {
				t.Fatalf("list %+v, want only the confirming ones (asked again while refused)", l)
			}
		}
	})
}

// An expired state with SkipExpired is never read: the reflector relists
// as it would without one, and is confirmed by that relist.
func TestReflectorSkipsAnExpiredStateWhenAsked(t *testing.T) {
	resumeReadRun(t, true, nil, func(h *harness) {
		h.create("c")
		h.src.Compact()
	}, func(h *harness, confirmed, reads *atomic.Int32) {
		h.converged()
		if reads.Load() != 0 {
			t.Fatalf("an expired state was read %d times with SkipExpired", reads.Load())
		}
		if h.store.count("replace") != 1 {
			t.Fatalf("store calls %v, want the relist only", h.store.calls)
		}
		if len(h.errs.find(listwatch.PhaseList, listwatch.ErrExpired)) == 0 {
			t.Fatalf("expired version not reported: %v", h.errs.errs)
		}
		if confirmed.Load() != 1 {
			t.Fatalf("Confirmed called %d times", confirmed.Load())
		}
	})
	// Without SkipExpired it is read, and the relist follows it.
	resumeReadRun(t, false, nil, func(h *harness) {
		h.create("c")
		h.src.Compact()
	}, func(h *harness, confirmed, reads *atomic.Int32) {
		h.converged()
		if reads.Load() != 1 || h.store.count("replace") != 2 {
			t.Fatalf("read %d times, store calls %v; want one read, then the state and the relist", reads.Load(), h.store.calls)
		}
	})
}

// A state the server is behind is never read.
func TestReflectorDoesNotReadAStateTheServerIsBehind(t *testing.T) {
	var reads atomic.Int32
	opts := plain
	opts.Resume = func(context.Context) (*reflector.Resume[obj], error) {
		return &reflector.Resume[obj]{ResourceVersion: "99", Read: func() ([]obj, error) {
			reads.Add(1)
			return []obj{cm("ghost")}, nil
		}}, nil
	}
	run(t, fake.Options[obj]{}, opts, func(h *harness) { h.create("a") }, func(h *harness) {
		h.converged()
		if reads.Load() != 0 {
			t.Fatalf("read %d times", reads.Load())
		}
		if len(h.errs.find(listwatch.PhaseList, reflector.ErrResumeRefused)) != 1 {
			t.Fatalf("refusal not reported once: %v", h.errs.errs)
		}
	})
}

// A state whose objects cannot be read after the server confirmed it (a
// file corrupt past its header) is reported and dropped: the reflector
// lists as without one.
func TestReflectorListsWhenAConfirmedStateCannotBeRead(t *testing.T) {
	bad := errors.New("checkpoint corrupt: checksum")
	resumeReadRun(t, false, bad, func(h *harness) { h.create("c") }, func(h *harness, confirmed, reads *atomic.Int32) {
		h.converged()
		if reads.Load() != 1 {
			t.Fatalf("read %d times", reads.Load())
		}
		if len(h.errs.find(listwatch.PhaseList, bad)) != 1 {
			t.Fatalf("read failure not reported once: %v", h.errs.errs)
		}
		if h.store.count("replace") != 1 || !strings.Contains(h.store.snapshot(), "c") {
			t.Fatalf("store calls %v, want the list, with c", h.store.calls)
		}
		if confirmed.Load() != 1 {
			t.Fatalf("Confirmed called %d times", confirmed.Load())
		}
	})
}

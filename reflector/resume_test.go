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

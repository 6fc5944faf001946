package reflector_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/reflector"
)

// wrapped is a source in front of a fake: each hook, when set, changes
// what passes.
type wrapped struct {
	*fake.Source[obj]
	// beforeList runs before each List.
	beforeList func(opts listwatch.Options)
	// watchOpts edits each watch's options before the fake sees them.
	watchOpts func(*listwatch.Options)
	// drop, when set, hides the events it returns true for.
	drop func(listwatch.Event[obj]) bool
	// delay, when set, is how long each event takes to come.
	delay func(listwatch.Event[obj]) time.Duration
}

func (w *wrapped) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[obj], error) {
	if w.beforeList != nil {
		w.beforeList(opts)
	}
	return w.Source.List(ctx, opts)
}

func (w *wrapped) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[obj], error) {
	if w.watchOpts != nil {
		w.watchOpts(&opts)
	}
	inner, err := w.Source.Watch(ctx, opts)
	if err != nil || (w.drop == nil && w.delay == nil) {
		return inner, err
	}
	return &filtered{inner, w.drop, w.delay}, nil
}

type filtered struct {
	listwatch.Watch[obj]
	drop  func(listwatch.Event[obj]) bool
	delay func(listwatch.Event[obj]) time.Duration
}

func (f *filtered) Next() (listwatch.Event[obj], error) {
	for {
		ev, err := f.Watch.Next()
		if err == nil && f.drop != nil && f.drop(ev) {
			continue
		}
		if err == nil && f.delay != nil {
			time.Sleep(f.delay(ev))
		}
		return ev, err
	}
}

// runWrapped is run with the reflector reading the fake through w, whose
// Source it fills in.
func runWrapped(t *testing.T, w *wrapped, opts reflector.Options[obj], setup func(*harness), body func(*harness)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		src, err := fake.New(fake.Options[obj]{})
		if err != nil {
			t.Fatal(err)
		}
		w.Source = src
		h := &harness{t: t, src: src, store: newMemStore(), errs: &errLog{}}
		opts.Source, opts.Store, opts.ErrorHandler = w, h.store, h.errs.handle
		if h.r, err = reflector.New(opts); err != nil {
			t.Fatal(err)
		}
		if setup != nil {
			setup(h)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- h.r.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}()
		synctest.Wait()
		body(h)
	})
}

// A paged list reports its pages, objects, the server's remaining count
// and an ETA from it while it runs; a relist expects what the last list
// held.
func TestReflectorProgressOfAPagedList(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []reflector.Progress // at each page request after the first
		r    **reflector.Reflector[obj]
	)
	w := &wrapped{beforeList: func(opts listwatch.Options) {
		if opts.Continue != "" {
			mu.Lock()
			seen = append(seen, (*r).Progress())
			mu.Unlock()
		}
		time.Sleep(time.Second) // each page takes a second
	}}
	opts := reflector.Options[obj]{Settings: reflector.Settings{Streaming: reflector.StreamingOff, PageSize: 2}}
	runWrapped(t, w, opts, func(h *harness) {
		r = &h.r
		h.create("a", "b", "c", "d", "e")
	}, func(h *harness) {
		h.pass(10 * time.Second)
		h.converged()
		mu.Lock()
		seen := slices.Clone(seen)
		mu.Unlock()
		if len(seen) != 2 {
			t.Fatalf("%d page requests after the first, want 2", len(seen))
		}
		p := seen[0] // after page 1 (1 s, 2 objects, 3 to come)
		if !p.Listing || p.Mode != reflector.ListPaged || p.Relist || p.Objects != 2 || p.Pages != 1 || p.Remaining != 3 || p.Expected != 5 {
			t.Fatalf("after page 1: %+v", p)
		}
		now := p.Started.Add(time.Second)
		if rate := p.Rate(now); rate != 2 {
			t.Errorf("rate after page 1: %v/s, want 2", rate)
		}
		if eta, ok := p.ETA(now); !ok || eta != 1500*time.Millisecond {
			t.Errorf("ETA after page 1: %v (%v), want 1.5s", eta, ok)
		}
		done := h.r.Progress()
		if done.Listing || done.Objects != 5 || done.Pages != 3 || done.Remaining != 0 || done.Expected != 5 ||
			done.Finished.Sub(done.Started) != 3*time.Second {
			t.Fatalf("after the list: %+v", done)
		}
		if _, ok := done.ETA(now); ok {
			t.Error("ETA given for a finished list")
		}

		h.create("f")
		h.src.SendError(listwatch.ErrExpired)
		h.pass(2 * reflector.DefaultBackoffInitial) // the back-off, into the first page's second
		relist := h.r.Progress()
		if !relist.Listing || !relist.Relist || relist.Expected != 5 || relist.Objects != 0 {
			t.Fatalf("relist starting: %+v, want one expecting the last list's 5 objects", relist)
		}
		h.pass(time.Minute)
		h.converged()
		if p := h.r.Progress(); p.Listing || p.Objects != 6 || !p.Relist {
			t.Fatalf("after the relist: %+v", p)
		}
	})
}

// A streaming list whose end bookmark never comes (a proxy dropped it) is
// given up once it has been silent for InitialEventsTimeout (between one
// and two timeouts after its last object) for a paged list, which is
// reported and counted; with StreamingAuto later lists are paged from the
// start.
func TestReflectorFallsBackWhenInitialEventsEndNeverComes(t *testing.T) {
	w := &wrapped{drop: func(ev listwatch.Event[obj]) bool { return ev.InitialEventsEnd }}
	opts := reflector.Options[obj]{Settings: reflector.Settings{InitialEventsTimeout: 10 * time.Second}}
	runWrapped(t, w, opts, func(h *harness) { h.create("a", "b") }, func(h *harness) {
		if n := len(h.src.ListCalls()); n != 0 {
			t.Fatalf("%d plain lists before the timeout", n)
		}
		if p := h.r.Progress(); !p.Listing || p.Mode != reflector.ListStreaming || p.Objects != 2 {
			t.Fatalf("streaming list under way: %+v", p)
		}
		h.pass(20 * time.Second)
		h.converged()
		if n := len(h.src.ListCalls()); n != 1 {
			t.Fatalf("%d plain lists after the timeout, want 1", n)
		}
		errs := h.errs.find(listwatch.PhaseWatchStream, reflector.ErrInitialEventsTimeout)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "10s") {
			t.Fatalf("errors: %v", h.errs.errs)
		}
		p := h.r.Progress()
		if p.Fallbacks != 1 || !strings.Contains(p.LastFallback, "initial-events-end") || p.Mode != reflector.ListPaged {
			t.Fatalf("progress: %+v", p)
		}
		h.src.SendError(listwatch.ErrExpired)
		h.pass(time.Minute)
		h.converged()
		if n := len(h.src.ListCalls()); n != 2 {
			t.Fatalf("%d plain lists after a relist, want 2 (streaming given up)", n)
		}
		if p := h.r.Progress(); p.Fallbacks != 1 {
			t.Fatalf("fallbacks %d after a paged relist, want 1", p.Fallbacks)
		}
	})
}

// A streaming list whose end bookmark was dropped is given up even on a
// busy cluster, where objects are created more often than the timeout:
// adds that come after a change are new objects, not initial events.
func TestReflectorFallsBackWhenTheBookmarkIsDroppedAndObjectsKeepBeingCreated(t *testing.T) {
	w := &wrapped{drop: func(ev listwatch.Event[obj]) bool { return ev.InitialEventsEnd }}
	opts := reflector.Options[obj]{Settings: reflector.Settings{InitialEventsTimeout: 10 * time.Second}}
	runWrapped(t, w, opts, func(h *harness) { h.create("a", "b") }, func(h *harness) {
		changed := cm("a")
		changed.Data = map[string]string{"k": "v"}
		if _, err := h.src.Update(changed); err != nil {
			t.Fatal(err)
		}
		for i := range 12 { // a minute of creations, one every 5 s
			h.pass(5 * time.Second)
			h.create(fmt.Sprintf("new%02d", i)) // fixed width: snapshot and truth sort alike
		}
		h.settle()
		h.converged()
		if errs := h.errs.find(listwatch.PhaseWatchStream, reflector.ErrInitialEventsTimeout); len(errs) != 1 {
			t.Fatalf("errors: %v, want one ErrInitialEventsTimeout", h.errs.errs)
		}
		if n := len(h.src.ListCalls()); n != 1 {
			t.Fatalf("%d plain lists, want the fallback's 1", n)
		}
		if p := h.r.Progress(); p.Listing || p.Fallbacks != 1 || p.Mode != reflector.ListPaged {
			t.Fatalf("progress: %+v", p)
		}
	})
}

// A streaming list whose objects keep coming is not cut off, however long
// it takes: a million objects take minutes, far past InitialEventsTimeout,
// and a paged list of them costs the server much more.
func TestReflectorKeepsASlowStreamingListWhoseObjectsKeepComing(t *testing.T) {
	w := &wrapped{delay: func(ev listwatch.Event[obj]) time.Duration {
		if ev.Type == listwatch.Added {
			return 6 * time.Second
		}
		return 0
	}}
	opts := reflector.Options[obj]{Settings: reflector.Settings{InitialEventsTimeout: 10 * time.Second}}
	runWrapped(t, w, opts, func(h *harness) { h.create("a", "b", "c", "d", "e", "f") }, func(h *harness) {
		h.pass(time.Minute) // six objects, 36 s: three times the timeout
		h.converged()
		if n := len(h.src.ListCalls()); n != 0 {
			t.Fatalf("%d plain lists, want none: the streaming list was cut off", n)
		}
		if errs := h.errs.find(listwatch.PhaseWatchStream, reflector.ErrInitialEventsTimeout); len(errs) != 0 {
			t.Fatalf("errors: %v", errs)
		}
		if p := h.r.Progress(); p.Listing || p.Fallbacks != 0 || p.Mode != reflector.ListStreaming || p.Objects != 6 {
			t.Fatalf("progress after the list: %+v", p)
		}
	})
}

// A watch the server should have closed long ago, through which nothing
// has come for its timeout plus the bookmark interval, is closed and
// reopened at the last version, without a relist; a healthy watch, closed
// by the server at its timeout, never is.
func TestReflectorRestartsAStalledWatch(t *testing.T) {
	settings := reflector.Settings{Streaming: reflector.StreamingOff,
		MinWatchTimeout: time.Minute, MaxWatchTimeout: time.Minute, BookmarkInterval: 30 * time.Second}
	t.Run("stalled", func(t *testing.T) {
		var stall atomic.Bool
		stall.Store(true)
		w := &wrapped{watchOpts: func(o *listwatch.Options) {
			if stall.Load() {
				o.TimeoutSeconds = 0 // held open and silent, as by a stuck proxy
			}
		}}
		runWrapped(t, w, reflector.Options[obj]{Settings: settings}, func(h *harness) { h.create("a") }, func(h *harness) {
			h.pass(89 * time.Second)
			if n := len(h.src.WatchCalls()); n != 1 {
				t.Fatalf("%d watches before timeout plus bookmark interval, want 1", n)
			}
			stall.Store(false)
			h.pass(91 * time.Second) // caught within twice the limit
			if n := len(h.src.WatchCalls()); n < 2 {
				t.Fatalf("%d watches, want the stalled one reopened", n)
			}
			if len(h.errs.find(listwatch.PhaseWatchStream, reflector.ErrWatchStalled)) != 1 || h.r.Progress().StalledWatches != 1 {
				t.Fatalf("errors %v, progress %+v", h.errs.errs, h.r.Progress())
			}
			h.create("b")
			h.settle()
			h.converged()
			if n := len(h.src.ListCalls()); n != 1 {
				t.Fatalf("%d lists, want no relist", n)
			}
		})
	})
	t.Run("healthy", func(t *testing.T) {
		w := &wrapped{}
		runWrapped(t, w, reflector.Options[obj]{Settings: settings}, func(h *harness) { h.create("a") }, func(h *harness) {
			for i := range 10 {
				h.pass(time.Minute)
				h.create("x" + strconv.Itoa(i))
			}
			h.settle()
			h.converged()
			if h.errs.len() != 0 || h.r.Progress().StalledWatches != 0 {
				t.Fatalf("errors %v on watches the server closes in time", h.errs.errs)
			}
		})
	})
}

// After an outage long enough for the back-off to reach its cap, the
// source's first answer (here "expired": history was compacted meanwhile)
// starts the back-off over: the relist waits under 1.6 s, not the
// outage's 30-60 s.
func TestReflectorResetsBackoffWhenTheSourceAnswersAgain(t *testing.T) {
	tl := newTally()
	opts := plain
	opts.Metrics = tl
	run(t, fake.Options[obj]{}, opts, func(h *harness) { h.create("a") }, func(h *harness) {
		h.src.RefuseFor(5 * time.Minute)
		h.src.ResetWatches()
		h.pass(4 * time.Minute)
		if _, d := tl.get("backoff"); d < reflector.DefaultBackoffMax.Seconds() {
			t.Fatalf("back-off %vs during the outage, want the cap", d)
		}
		h.create("b")
		h.src.Compact() // the watch's version is gone: the next answer is expired
		before := len(h.src.ListCalls())
		h.pass(3 * time.Minute)
		h.converged()
		if len(h.src.ListCalls()) == before {
			t.Fatal("no relist after the outage")
		}
		if len(h.errs.find(listwatch.PhaseWatchStart, listwatch.ErrExpired))+len(h.errs.find(listwatch.PhaseWatchStream, listwatch.ErrExpired)) == 0 {
			t.Fatalf("the source never answered expired: %v", h.errs.errs)
		}
		if _, d := tl.get("backoff"); d >= 2*reflector.DefaultBackoffInitial.Seconds() {
			t.Fatalf("relist after the outage waited %vs, want the first step (< %v)", d, 2*reflector.DefaultBackoffInitial)
		}
	})
}

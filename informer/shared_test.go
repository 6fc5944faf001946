package informer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// errSink collects reported errors.
type errSink struct {
	mu   sync.Mutex
	errs []error
}

func (s *errSink) add(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

func (s *errSink) all() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

type cmInformer = Shared[*corev1.ConfigMap]

// harness runs one shared informer over a fake source inside a synctest
// bubble.
type harness struct {
	t      *testing.T
	src    *fake.Source[*corev1.ConfigMap]
	inf    *cmInformer
	errs   *errSink
	cancel context.CancelFunc
	done   chan error
}

// startShared fills a fake source with objects o0..o(n-1), builds an
// informer over it with opts (Source and ErrorHandler filled in), lets
// setup add handlers, and runs it. The caller must call stop.
func startShared(t *testing.T, n int, opts Options[*corev1.ConfigMap], setup func(*cmInformer)) *harness {
	t.Helper()
	src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := src.Create(cm(fmt.Sprintf("o%d", i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	h := &harness{t: t, src: src, errs: &errSink{}, done: make(chan error, 1)}
	opts.Source = src
	if opts.ErrorHandler == nil {
		opts.ErrorHandler = h.errs.add
	}
	h.inf, err = NewShared(opts)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(h.inf)
	}
	ctx, cancel := context.WithCancel(t.Context())
	h.cancel = cancel
	go func() { h.done <- h.inf.Run(ctx) }()
	return h
}

func (h *harness) stop() {
	h.cancel()
	if err := <-h.done; err != nil {
		h.t.Errorf("Run: %v", err)
	}
}

func (h *harness) addHandler(r Handler[*corev1.ConfigMap], opts HandlerOptions) *Registration {
	h.t.Helper()
	reg, err := h.inf.AddHandler(r, opts)
	if err != nil {
		h.t.Fatal(err)
	}
	return reg
}

func (h *harness) update(name string) {
	h.t.Helper()
	obj, ok := h.src.Get("ns", name)
	if !ok {
		h.t.Fatalf("no object %s", name)
	}
	if obj.Labels == nil {
		obj.Labels = map[string]string{}
	}
	obj.Labels["n"] = fmt.Sprint(len(obj.Labels["n"]) + 1)
	if _, err := h.src.Update(obj); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) cacheVersions() map[string]string {
	return versionsOf(h.inf.Cache().List())
}

func (h *harness) sourceVersions() map[string]string {
	return versionsOf(h.src.Objects())
}

func TestSharedDeliversInitialListThenLiveEventsToEarlyHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newViewRecorder[*corev1.ConfigMap]()
		var reg *Registration
		h := startShared(t, 20, Options[*corev1.ConfigMap]{}, func(inf *cmInformer) {
			var err error
			if reg, err = inf.AddHandler(r, HandlerOptions{}); err != nil {
				t.Fatal(err)
			}
		})
		defer h.stop()
		synctest.Wait()
		if !h.inf.HasSynced() || !reg.HasSynced() {
			t.Fatalf("informer synced %v, registration synced %v", h.inf.HasSynced(), reg.HasSynced())
		}
		if r.adds != 20 || r.initial != 20 {
			t.Errorf("%d adds, %d in the initial list; want 20 and 20", r.adds, r.initial)
		}
		h.update("o1")
		if _, err := h.src.Delete("ns", "o2"); err != nil {
			t.Fatal(err)
		}
		if _, err := h.src.Create(cm("new", 0)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if r.updates != 1 || r.deletes != 1 || r.adds != 21 || r.initial != 20 {
			t.Errorf("after live events: %d adds (%d initial), %d updates, %d deletes; want 21 (20), 1, 1",
				r.adds, r.initial, r.updates, r.deletes)
		}
		if errs := r.errors(); len(errs) > 0 {
			t.Errorf("invalid calls: %v", errs)
		}
		if got, want := r.versions(), h.sourceVersions(); !maps.Equal(got, want) {
			t.Errorf("handler view %v, source %v", got, want)
		}
		if rv := h.inf.LastSyncResourceVersion(); rv != h.src.ResourceVersion() {
			t.Errorf("LastSyncResourceVersion %q, source at %q", rv, h.src.ResourceVersion())
		}
	})
}

// TestSharedLateHandlerGetsOneAddPerCachedObjectBeforeLiveEvents adds a
// handler to a synced informer while updates stream in: it gets exactly one
// add per cached object, flagged as initial, before any live event.
func TestSharedLateHandlerGetsOneAddPerCachedObjectBeforeLiveEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startShared(t, 100, Options[*corev1.ConfigMap]{}, nil)
		defer h.stop()
		synctest.Wait()

		stopUpdates := make(chan struct{})
		updaterDone := make(chan struct{})
		go func() {
			defer close(updaterDone)
			for i := 0; ; i++ {
				select {
				case <-stopUpdates:
					return
				default:
				}
				h.update(fmt.Sprintf("o%d", i%100))
				if i%10 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
		time.Sleep(50 * time.Millisecond)
		r := newViewRecorder[*corev1.ConfigMap]()
		r.recordOrder = true
		reg := h.addHandler(r, HandlerOptions{Name: "late"})
		time.Sleep(50 * time.Millisecond)
		close(stopUpdates)
		<-updaterDone
		synctest.Wait()

		if !reg.HasSynced() {
			t.Error("late registration not synced")
		}
		if r.adds != 100 || r.initial != 100 {
			t.Errorf("%d adds (%d initial), want exactly 100 (100)", r.adds, r.initial)
		}
		for i, call := range r.order[:100] {
			if call[:4] != "add " {
				t.Fatalf("call %d is %q, before every initial add was delivered", i, call)
			}
		}
		if r.updates == 0 {
			t.Error("no live update reached the late handler")
		}
		if errs := r.errors(); len(errs) > 0 {
			t.Errorf("invalid calls: %v", errs[:min(5, len(errs))])
		}
		if got, want := r.versions(), h.cacheVersions(); !maps.Equal(got, want) {
			t.Errorf("late handler's view differs from the cache")
		}
	})
}

// TestSharedRemoveHandlerStopsDeliveryAndEndsItsGoroutine.
func TestSharedRemoveHandlerStopsDeliveryAndEndsItsGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startShared(t, 5, Options[*corev1.ConfigMap]{}, nil)
		defer h.stop()
		keep, gone := newViewRecorder[*corev1.ConfigMap](), newViewRecorder[*corev1.ConfigMap]()
		h.addHandler(keep, HandlerOptions{})
		reg := h.addHandler(gone, HandlerOptions{})
		synctest.Wait()
		h.inf.handlers.mu.Lock()
		l := h.inf.handlers.listeners[1]
		h.inf.handlers.mu.Unlock()

		if err := h.inf.RemoveHandler(reg); err != nil {
			t.Fatal(err)
		}
		<-l.exited // a leak would deadlock the bubble and fail the test
		before := gone.calls.Load()
		h.update("o1")
		h.update("o2")
		synctest.Wait()
		if got := gone.calls.Load(); got != before {
			t.Errorf("removed handler got %d more calls", got-before)
		}
		if keep.updates != 2 {
			t.Errorf("remaining handler got %d updates, want 2", keep.updates)
		}
		if err := h.inf.RemoveHandler(reg); !errors.Is(err, ErrUnknownRegistration) {
			t.Errorf("second RemoveHandler: %v, want ErrUnknownRegistration", err)
		}
	})
}

// TestSharedRemoveHandlerOfAnotherInformerChangesNothing: a registration
// handed to another informer's RemoveHandler is refused there and stays
// registered, delivering, with its own informer, which can still remove it.
func TestSharedRemoveHandlerOfAnotherInformerChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := startShared(t, 2, Options[*corev1.ConfigMap]{}, nil)
		defer a.stop()
		b := startShared(t, 2, Options[*corev1.ConfigMap]{}, nil)
		defer b.stop()
		rec := newViewRecorder[*corev1.ConfigMap]()
		reg := a.addHandler(rec, HandlerOptions{})
		b.addHandler(newViewRecorder[*corev1.ConfigMap](), HandlerOptions{})
		synctest.Wait()

		if err := b.inf.RemoveHandler(reg); !errors.Is(err, ErrUnknownRegistration) {
			t.Errorf("RemoveHandler on another informer: %v, want ErrUnknownRegistration", err)
		}
		b.inf.handlers.mu.Lock()
		if n := len(b.inf.handlers.listeners); n != 1 {
			t.Errorf("the other informer has %d handlers, want its own 1", n)
		}
		b.inf.handlers.mu.Unlock()
		a.update("o1")
		synctest.Wait()
		if rec.updates != 1 {
			t.Fatalf("handler got %d updates after a foreign removal, want 1", rec.updates)
		}
		if err := a.inf.RemoveHandler(reg); err != nil {
			t.Fatalf("RemoveHandler on its own informer: %v", err)
		}
		a.update("o1")
		synctest.Wait()
		if rec.updates != 1 {
			t.Errorf("handler got %d updates after its removal, want 1", rec.updates)
		}
	})
}

// TestSharedBlockedHandlerDelaysNobodyAndBacklogStaysBounded blocks one
// handler for the whole test while 1,000,000 updates over 10,000 objects
// go through: another handler and the cache keep up, and the blocked
// handler's backlog never passes the number of cached objects.
func TestSharedBlockedHandlerDelaysNobodyAndBacklogStaysBounded(t *testing.T) {
	const objects, updates = 10000, 1000000
	if testing.Short() {
		t.Skip("long")
	}
	synctest.Test(t, func(t *testing.T) {
		blocked := newViewRecorder[*corev1.ConfigMap]()
		blocked.gate = make(chan struct{})
		fast := newViewRecorder[*corev1.ConfigMap]()
		var blockedReg, fastReg *Registration
		h := startShared(t, objects, Options[*corev1.ConfigMap]{}, func(inf *cmInformer) {
			blockedReg, _ = inf.AddHandler(blocked, HandlerOptions{Name: "blocked"})
			fastReg, _ = inf.AddHandler(fast, HandlerOptions{Name: "fast"})
		})
		defer h.stop()
		synctest.Wait()
		if !fastReg.HasSynced() || blockedReg.HasSynced() {
			t.Fatalf("fast synced %v (want true), blocked synced %v (want false)", fastReg.HasSynced(), blockedReg.HasSynced())
		}
		h.inf.handlers.mu.Lock()
		bl := h.inf.handlers.listeners[0]
		h.inf.handlers.mu.Unlock()

		// Two prepared versions per object, fed straight into the informer's
		// queue the way the reflector would (the source would copy each one).
		versions := make([][2]*corev1.ConfigMap, objects)
		for i := range versions {
			name := fmt.Sprintf("o%d", i)
			versions[i] = [2]*corev1.ConfigMap{cm(name, 2*i+1e7), cm(name, 2*i+1e7+1)}
		}
		w := h.inf.writer
		maxBacklog := 0
		for i := range updates {
			obj := versions[i%objects][(i/objects)%2]
			if err := w.Update(obj); err != nil {
				t.Fatal(err)
			}
			if i%1000 == 0 {
				maxBacklog = max(maxBacklog, bl.backlog())
			}
		}
		synctest.Wait()
		maxBacklog = max(maxBacklog, bl.backlog())
		if maxBacklog > objects {
			t.Errorf("blocked handler's backlog reached %d, more than the %d cached objects", maxBacklog, objects)
		}
		if n := blocked.calls.Load(); n != 0 {
			t.Fatalf("blocked handler made %d calls", n)
		}
		if n := h.inf.queue.Len(); n != 0 {
			t.Errorf("informer queue holds %d keys while a handler is blocked", n)
		}
		if got, want := fast.versions(), h.cacheVersions(); !maps.Equal(got, want) {
			t.Errorf("fast handler's view differs from the cache while another handler is blocked")
		}
		if errs := fast.errors(); len(errs) > 0 {
			t.Errorf("fast handler: invalid calls: %v", errs[:min(5, len(errs))])
		}
		close(blocked.gate)
		synctest.Wait()
		if got, want := blocked.versions(), h.cacheVersions(); !maps.Equal(got, want) {
			t.Errorf("unblocked handler's view differs from the cache")
		}
		if errs := blocked.errors(); len(errs) > 0 {
			t.Errorf("unblocked handler: invalid calls: %v", errs[:min(5, len(errs))])
		}
		if !blockedReg.HasSynced() {
			t.Error("unblocked handler's registration did not sync")
		}
	})
}

// TestSharedRegistrationSyncsPerHandler checks that each registration syncs
// when its own handler has processed its initial adds, for early and late
// handlers.
func TestSharedRegistrationSyncsPerHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := newViewRecorder[*corev1.ConfigMap]()
		slow.gate = make(chan struct{})
		var slowReg, fastReg *Registration
		h := startShared(t, 3, Options[*corev1.ConfigMap]{}, func(inf *cmInformer) {
			slowReg, _ = inf.AddHandler(slow, HandlerOptions{})
			fastReg, _ = inf.AddHandler(newViewRecorder[*corev1.ConfigMap](), HandlerOptions{})
		})
		defer h.stop()
		synctest.Wait()
		if !h.inf.HasSynced() || !fastReg.HasSynced() {
			t.Fatal("informer or fast registration not synced")
		}
		for i := range 3 {
			if slowReg.HasSynced() {
				t.Fatalf("slow registration synced after %d of 3 initial adds", i)
			}
			slow.gate <- struct{}{}
			synctest.Wait()
		}
		if !slowReg.HasSynced() {
			t.Fatal("slow registration not synced after its 3 initial adds")
		}

		late := newViewRecorder[*corev1.ConfigMap]()
		late.gate = make(chan struct{})
		lateReg := h.addHandler(late, HandlerOptions{})
		synctest.Wait()
		if lateReg.HasSynced() {
			t.Fatal("late registration synced before its initial adds")
		}
		close(late.gate)
		synctest.Wait()
		if !lateReg.HasSynced() {
			t.Fatal("late registration not synced after its initial adds")
		}
		close(slow.gate)
	})
}

// TestSharedPanickingHandlerLeavesOthersAndItsSyncIntact.
func TestSharedPanickingHandlerLeavesOthersAndItsSyncIntact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calm := newViewRecorder[*corev1.ConfigMap]()
		wild := newViewRecorder[*corev1.ConfigMap]()
		wild.onCall = func() { panic("wild") }
		var wildReg *Registration
		h := startShared(t, 4, Options[*corev1.ConfigMap]{}, func(inf *cmInformer) {
			wildReg, _ = inf.AddHandler(wild, HandlerOptions{Name: "wild"})
			inf.AddHandler(calm, HandlerOptions{})
		})
		defer h.stop()
		synctest.Wait()
		h.update("o0")
		synctest.Wait()
		if !wildReg.HasSynced() {
			t.Error("panicking handler's registration did not sync")
		}
		if calm.adds != 4 || calm.updates != 1 {
			t.Errorf("other handler got %d adds and %d updates, want 4 and 1", calm.adds, calm.updates)
		}
		var panics int
		for _, err := range h.errs.all() {
			var pe *HandlerPanicError
			if errors.As(err, &pe) && pe.Handler == "wild" {
				panics++
			}
		}
		if panics != 5 {
			t.Errorf("%d panics reported, want 5 (4 adds and 1 update)", panics)
		}
		if h.inf.IsStopped() {
			t.Error("informer stopped")
		}
	})
}

// TestSharedResyncsEachHandlerAtItsOwnPeriod checks per-handler resync.
func TestSharedResyncsEachHandlerAtItsOwnPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		every1, every3, never := newViewRecorder[*corev1.ConfigMap](), newViewRecorder[*corev1.ConfigMap](), newViewRecorder[*corev1.ConfigMap]()
		h := startShared(t, 2, Options[*corev1.ConfigMap]{ResyncPeriod: 3 * time.Minute}, func(inf *cmInformer) {
			inf.AddHandler(every1, HandlerOptions{ResyncPeriod: time.Minute})
			inf.AddHandler(every3, HandlerOptions{})
			inf.AddHandler(never, HandlerOptions{ResyncPeriod: -1})
		})
		defer h.stop()
		synctest.Wait()
		// Added after start asking for less than the timer's period: it
		// resyncs at the timer's period, one minute.
		late := newViewRecorder[*corev1.ConfigMap]()
		h.addHandler(late, HandlerOptions{ResyncPeriod: 10 * time.Second})
		time.Sleep(10*time.Minute + time.Second)
		synctest.Wait()
		if late.updates != 20 {
			t.Errorf("late 10-second handler: %d resync updates in 10 minutes, want 20 (clamped to 1m)", late.updates)
		}
		// Two objects per resync.
		if every1.updates != 20 {
			t.Errorf("1-minute handler: %d resync updates in 10 minutes, want 20", every1.updates)
		}
		if every3.updates != 6 {
			t.Errorf("3-minute handler: %d resync updates in 10 minutes, want 6", every3.updates)
		}
		if never.updates != 0 {
			t.Errorf("handler without resync got %d updates", never.updates)
		}
		for _, r := range []*viewRecorder[*corev1.ConfigMap]{every1, every3} {
			if errs := r.errors(); len(errs) > 0 {
				t.Errorf("invalid calls: %v", errs)
			}
		}
	})
}

func TestSharedTransformDropsManagedFieldsBeforeCaching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newViewRecorder[*corev1.ConfigMap]()
		h := startShared(t, 0, Options[*corev1.ConfigMap]{Transform: DropManagedFields[*corev1.ConfigMap]},
			func(inf *cmInformer) { inf.AddHandler(r, HandlerOptions{}) })
		defer h.stop()
		synctest.Wait()
		if !h.inf.HasSynced() {
			t.Fatal("informer over an empty source did not sync")
		}
		obj := cm("m", 0)
		obj.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
		if _, err := h.src.Create(obj); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		cached, ok, _ := h.inf.Cache().GetByKey("ns/m")
		if !ok || cached.ManagedFields != nil {
			t.Errorf("cached object %v (present %v) keeps managedFields", cached, ok)
		}
		if got := r.view["ns/m"]; got == nil || got.ManagedFields != nil {
			t.Errorf("handler got %v, want an object without managedFields", got)
		}
	})
}

func TestSharedAddIndexersBeforeAndAfterStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		byName := func(o *corev1.ConfigMap) ([]string, error) { return []string{o.Name}, nil }
		h := startShared(t, 3, Options[*corev1.ConfigMap]{
			Indexers: cache.Indexers[*corev1.ConfigMap]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[*corev1.ConfigMap]},
		}, nil)
		defer h.stop()
		synctest.Wait()
		if err := h.inf.AddIndexers(cache.Indexers[*corev1.ConfigMap]{"name": byName}); err != nil {
			t.Fatal(err)
		}
		if objs, err := h.inf.Cache().ByIndex(cache.NamespaceIndex, "ns"); err != nil || len(objs) != 3 {
			t.Errorf("namespace index: %d objects, %v; want 3", len(objs), err)
		}
		if objs, err := h.inf.Cache().ByIndex("name", "o2"); err != nil || len(objs) != 1 {
			t.Errorf("index added after start: %d objects, %v; want 1", len(objs), err)
		}
	})
}

// TestSharedMutationDetectorReportsMutatedCachedObject mutates one cached
// object the way a careless handler would. (The write is made under the
// detector's lock only so that the race detector, which would rightly
// flag a real handler's write, lets the test run.)
func TestSharedMutationDetectorReportsMutatedCachedObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startShared(t, 2, Options[*corev1.ConfigMap]{MutationDetector: true}, nil)
		defer h.stop()
		synctest.Wait()
		obj, ok, _ := h.inf.Cache().GetByKey("ns/o1")
		if !ok {
			t.Fatal("o1 not cached")
		}
		detectorOf(h.inf).mu.Lock()
		obj.Data = map[string]string{"bad": "write"} // forbidden
		detectorOf(h.inf).mu.Unlock()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		var mutated []string
		for _, err := range h.errs.all() {
			var me *MutationError
			if errors.As(err, &me) {
				mutated = append(mutated, me.Key)
			}
		}
		if fmt.Sprint(mutated) != "[ns/o1]" {
			t.Errorf("mutations reported for %v, want [ns/o1] once", mutated)
		}
	})
}

func TestSharedMutationDetectorTurnedOnByEnvironment(t *testing.T) {
	t.Setenv(MutationDetectorEnv, "true")
	src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
	if err != nil {
		t.Fatal(err)
	}
	inf, err := NewShared(Options[*corev1.ConfigMap]{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if detectorOf(inf) == nil {
		t.Error("detector off with " + MutationDetectorEnv + "=true")
	}
}

func TestSharedLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startShared(t, 1, Options[*corev1.ConfigMap]{}, nil)
		synctest.Wait()
		if h.inf.IsStopped() {
			t.Error("stopped while running")
		}
		if err := h.inf.Run(t.Context()); !errors.Is(err, ErrAlreadyStarted) {
			t.Errorf("second Run: %v, want ErrAlreadyStarted", err)
		}
		h.stop()
		if !h.inf.IsStopped() {
			t.Error("not stopped after Run returned")
		}
		if _, err := h.inf.AddHandler(newViewRecorder[*corev1.ConfigMap](), HandlerOptions{}); !errors.Is(err, ErrStopped) {
			t.Errorf("AddHandler after stop: %v, want ErrStopped", err)
		}
	})
}

// TestSharedDeliversMissedDeleteWithStateUnknown loses a delete while the
// watch is down and the history compacted: the relist finds the object
// gone, and handlers get a delete of the last known object, flagged.
func TestSharedDeliversMissedDeleteWithStateUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newViewRecorder[*corev1.ConfigMap]()
		src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
		if err != nil {
			t.Fatal(err)
		}
		src.Create(cm("stays", 0))
		src.Create(cm("goes", 0))
		inf, err := NewShared(Options[*corev1.ConfigMap]{
			Source: src, ErrorHandler: func(error) {},
		})
		if err != nil {
			t.Fatal(err)
		}
		inf.AddHandler(r, HandlerOptions{})
		var lastDeleted *corev1.ConfigMap
		inf.AddHandler(HandlerFuncs[*corev1.ConfigMap]{DeleteFunc: func(obj *corev1.ConfigMap, _ bool) {
			lastDeleted = obj
		}}, HandlerOptions{})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- inf.Run(ctx) }()
		synctest.Wait()
		known, _, _ := inf.Cache().GetByKey("ns/goes")

		src.ResetWatches() // the reflector backs off before watching again
		synctest.Wait()
		if _, err := src.Delete("ns", "goes"); err != nil {
			t.Fatal(err)
		}
		src.Compact() // the watch cannot resume: relist
		time.Sleep(time.Minute)
		synctest.Wait()

		if r.deletes != 1 || r.unknown != 1 {
			t.Fatalf("%d deletes, %d with state unknown; want 1 and 1", r.deletes, r.unknown)
		}
		if errs := r.errors(); len(errs) > 0 {
			t.Errorf("invalid calls: %v", errs)
		}
		if got := r.versions(); len(got) != 1 || got["ns/stays"] == "" {
			t.Errorf("view %v, want only ns/stays", got)
		}
		if lastDeleted == nil || lastDeleted.ResourceVersion != known.ResourceVersion {
			t.Errorf("deleted object %v, want the last known state (rv %s)", lastDeleted, known.ResourceVersion)
		}
		cancel()
		<-done
	})
}

package replicas

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/shard"
)

type cm = *corev1.ConfigMap

// newCM returns a config map whose uid is derived from its name, so its
// range is fixed.
func newCM(name string) cm {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
		UID: types.UID(fmt.Sprintf("uid-%s-7f3a", name))}}
}

// world is a fake server of config maps, with a source per shard that
// counts its lists (plain or streaming) and can hold them back.
type world struct {
	src *fake.Source[cm]

	mu    sync.Mutex
	lists map[shard.Set]int
	// hold, when set for a shard, blocks that shard's lists until closed.
	hold map[shard.Set]chan struct{}
	// delay is how long every list takes (on the bubble's clock).
	delay time.Duration
}

func newWorld(t *testing.T, n int) *world {
	t.Helper()
	src, err := fake.New(fake.Options[cm]{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := src.Create(newCM(fmt.Sprintf("o%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	return &world{src: src, lists: map[shard.Set]int{}, hold: map[shard.Set]chan struct{}{}}
}

func (w *world) newSource(set shard.Set) (listwatch.ListerWatcher[cm], error) {
	return &countingSource{w: w, set: set, ListerWatcher: shard.Filter[cm](w.src, set)}, nil
}

func (w *world) listsOf(set shard.Set) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lists[set]
}

type countingSource struct {
	listwatch.ListerWatcher[cm]
	w   *world
	set shard.Set
}

// list counts a list (a plain one, or a streaming one: a watch with
// initial events) and waits while the shard's lists are held.
func (c *countingSource) list(ctx context.Context) error {
	c.w.mu.Lock()
	c.w.lists[c.set]++
	hold, delay := c.w.hold[c.set], c.w.delay
	c.w.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (c *countingSource) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[cm], error) {
	if err := c.list(ctx); err != nil {
		return listwatch.Page[cm]{}, err
	}
	return c.ListerWatcher.List(ctx, opts)
}

func (c *countingSource) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[cm], error) {
	if opts.SendInitialEvents {
		if err := c.list(ctx); err != nil {
			return nil, err
		}
	}
	return c.ListerWatcher.Watch(ctx, opts)
}

// inRanges returns the names of the source's objects in rs.
func (w *world) inRanges(rs ...shard.Range) []string {
	var out []string
	for _, o := range w.src.Objects() {
		h := shard.HashOf(o, shard.UID)
		for _, r := range rs {
			if r.Contains(h) {
				out = append(out, o.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

func setOf(t *testing.T, r shard.Range) shard.Set {
	t.Helper()
	s, err := shard.NewSet(shard.UID, r)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// notes records what a Handler is told, by kind.
type notes struct {
	mu sync.Mutex
	by map[string][]string // kind -> names
}

func newNotes() *notes { return &notes{by: map[string][]string{}} }

func (n *notes) add(kind, name string) {
	n.mu.Lock()
	n.by[kind] = append(n.by[kind], name)
	n.mu.Unlock()
}

func (n *notes) take() map[string][]string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.by
	for _, v := range out {
		slices.Sort(v)
	}
	n.by = map[string][]string{}
	return out
}

func (n *notes) handler() Handler[cm] {
	return HandlerFuncs[cm]{
		AddFunc:     func(o cm, _ bool) { n.add("add", o.Name) },
		UpdateFunc:  func(_, o cm) { n.add("update", o.Name) },
		DeleteFunc:  func(o cm, _ bool) { n.add("delete", o.Name) },
		AcquireFunc: func(o cm) { n.add("acquire", o.Name) },
		ReleaseFunc: func(o cm) { n.add("release", o.Name) },
	}
}

// runInformer runs an Informer over w with one recording handler; stop
// ends it and waits.
func runInformer(t *testing.T, w *world) (inf *Informer[cm], n *notes, stop func()) {
	t.Helper()
	inf, err := NewInformer(InformerOptions[cm]{Name: "cms", NewSource: w.newSource,
		Informer: informer.Options[cm]{ErrorHandler: func(err error) { t.Errorf("informer: %v", err) }}})
	if err != nil {
		t.Fatal(err)
	}
	n = newNotes()
	if _, err := inf.AddHandler(n.handler()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	return inf, n, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

func cachedNames(inf *Informer[cm]) []string {
	var out []string
	for _, o := range inf.Cache().List() {
		out = append(out, o.Name)
	}
	slices.Sort(out)
	return out
}

// Changing the ranges lists the added range alone, drops the removed one
// alone, and tells the handler of both as acquisitions and releases.
func TestSetRangesListsOnlyTheAddedRangeAndDropsTheRemovedOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, 200)
		q := shard.Split(4)
		inf, n, stop := runInformer(t, w)
		defer stop()

		if err := inf.SetRanges(t.Context(), q[:2]); err != nil {
			t.Fatal(err)
		}
		if got, want := cachedNames(inf), w.inRanges(q[0], q[1]); !slices.Equal(got, want) {
			t.Fatalf("cached %d objects, want the %d of the first half", len(got), len(want))
		}
		if got := n.take(); !maps.EqualFunc(got, map[string][]string{"acquire": w.inRanges(q[0], q[1])}, slices.Equal) {
			t.Fatalf("handler told %v", got)
		}

		if err := inf.SetRanges(t.Context(), q[1:3]); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got, want := cachedNames(inf), w.inRanges(q[1], q[2]); !slices.Equal(got, want) {
			t.Errorf("cached %v, want %v", got, want)
		}
		if got, want := n.take(), map[string][]string{"acquire": w.inRanges(q[2]), "release": w.inRanges(q[0])}; !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("handler told %v, want %v", got, want)
		}
		for k, r := range q {
			want := map[int]int{0: 1, 1: 1, 2: 1, 3: 0}[k]
			if got := w.listsOf(setOf(t, r)); got != want {
				t.Errorf("range %d listed %d times, want %d", k, got, want)
			}
		}
		if got := inf.Ranges(); !slices.Equal(got, q[1:3]) {
			t.Errorf("Ranges() = %v", got)
		}
	})
}

// The gainer syncs first: until the added range is owned, the removed
// one still is, so every object of both stays owned throughout.
func TestSetRangesReleasesOnlyOnceTheAddedRangeIsOwned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, 100)
		halves := shard.Split(2)
		inf, n, stop := runInformer(t, w)
		defer stop()
		if err := inf.SetRanges(t.Context(), halves[:1]); err != nil {
			t.Fatal(err)
		}
		n.take()
		hold := make(chan struct{})
		w.mu.Lock()
		w.hold[setOf(t, halves[1])] = hold
		w.mu.Unlock()
		done := make(chan error, 1)
		go func() { done <- inf.SetRanges(t.Context(), halves[1:]) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("SetRanges returned before the new range synced: %v", err)
		default:
		}
		if got := inf.Ranges(); !slices.Equal(got, halves[:1]) {
			t.Errorf("while the new range syncs, owned %v, want the old %v", got, halves[:1])
		}
		for _, name := range w.inRanges(halves[0]) {
			if !inf.Owns(newCM(name)) {
				t.Errorf("%s not owned while the new range syncs", name)
			}
		}
		close(hold)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := inf.Ranges(); !slices.Equal(got, halves[1:]) {
			t.Errorf("owned %v, want %v", got, halves[1:])
		}
		if got := n.take(); len(got["release"]) != len(w.inRanges(halves[0])) || len(got["acquire"]) != len(w.inRanges(halves[1])) {
			t.Errorf("handler told %d releases and %d acquisitions", len(got["release"]), len(got["acquire"]))
		}
	})
}

// Changes of owned objects reach the handler as adds, updates and
// deletes; changes in other ranges do not reach it at all.
func TestOwnedChangesAreDeliveredAndOthersAreNot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, 0)
		halves := shard.Split(2)
		inf, n, stop := runInformer(t, w)
		defer stop()
		if err := inf.SetRanges(t.Context(), halves[:1]); err != nil {
			t.Fatal(err)
		}
		var mine, other string
		for k := 0; mine == "" || other == ""; k++ {
			name := fmt.Sprintf("x%d", k)
			if halves[0].Contains(shard.HashOf(newCM(name), shard.UID)) {
				mine = name
			} else {
				other = name
			}
		}
		for _, name := range []string{mine, other} {
			if _, err := w.src.Create(newCM(name)); err != nil {
				t.Fatal(err)
			}
			o := newCM(name)
			o.Labels = map[string]string{"v": "2"}
			if _, err := w.src.Update(o); err != nil {
				t.Fatal(err)
			}
			if _, err := w.src.Delete("ns", name); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		want := map[string][]string{"add": {mine}, "update": {mine}, "delete": {mine}}
		if got := n.take(); !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("handler told %v, want %v", got, want)
		}
	})
}

func TestHandlerAddedLaterAcquiresTheOwnedObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, 50)
		inf, _, stop := runInformer(t, w)
		defer stop()
		q := shard.Split(4)
		if err := inf.SetRanges(t.Context(), q[1:2]); err != nil {
			t.Fatal(err)
		}
		late := newNotes()
		if _, err := inf.AddHandler(late.handler()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got, want := late.take(), map[string][]string{"acquire": w.inRanges(q[1])}; !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("late handler told %v, want %v", got, want)
		}
	})
}

func TestSetRangesRefusesOverlapsAndRunRunsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, 0)
		inf, _, stop := runInformer(t, w)
		q := shard.Split(4)
		if err := inf.SetRanges(t.Context(), []shard.Range{q[0], {Start: q[0].Start + 1, End: q[1].End}}); !errors.Is(err, ErrOverlap) {
			t.Errorf("overlap: %v", err)
		}
		synctest.Wait()
		if err := inf.Run(t.Context()); !errors.Is(err, informer.ErrAlreadyStarted) {
			t.Errorf("second Run: %v", err)
		}
		stop()
		if err := inf.SetRanges(t.Context(), q[:1]); !errors.Is(err, ErrNotRunning) {
			t.Errorf("after Run: %v", err)
		}
	})
}

// A worker handed a key by OnAcquire finds the object owned and readable:
// the range is readable from its first acquisition, before it counts as
// owned for the group.
func TestAcquiredObjectsAreReadableFromTheirOnAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, 60)
		inf, err := NewInformer(InformerOptions[cm]{NewSource: w.newSource})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var unreadable []string
		acquired := 0
		if _, err := inf.AddHandler(HandlerFuncs[cm]{AcquireFunc: func(o cm) {
			_, found := inf.Cache().GetByNamespaceName(o.Namespace, o.Name)
			mu.Lock()
			defer mu.Unlock()
			acquired++
			if !found || !inf.Owns(o) {
				unreadable = append(unreadable, o.Name)
			}
		}}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = inf.Run(ctx) }()
		if err := inf.SetRanges(t.Context(), shard.Split(2)); err != nil {
			t.Fatal(err)
		}
		cancel()
		<-done
		if acquired != 60 || len(unreadable) > 0 {
			t.Errorf("acquired %d of 60; not readable in OnAcquire: %v", acquired, unreadable)
		}
	})
}

// Before Run, SetRanges waits for Run to start (so that `go inf.Run(ctx)`
// then SetRanges is not a race), and says so if its context ends first;
// ErrNotRunning is only for an Informer whose Run has returned.
func TestSetRangesBeforeRunWaitsForRunAndSaysSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, 10)
		inf, err := NewInformer(InformerOptions[cm]{Name: "cms", NewSource: w.newSource})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		err = inf.SetRanges(ctx, shard.Split(2))
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "Run has not started") {
			t.Errorf("SetRanges before Run, its context ended: %v; want DeadlineExceeded saying Run has not started", err)
		}
		done := make(chan error, 1)
		go func() { done <- inf.SetRanges(t.Context(), shard.Split(2)) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("SetRanges returned before Run started: %v", err)
		default:
		}
		runCtx, stop := context.WithCancel(t.Context())
		ran := make(chan error, 1)
		go func() { ran <- inf.Run(runCtx) }()
		if err := <-done; err != nil {
			t.Errorf("SetRanges waiting for Run: %v", err)
		}
		if got := inf.Cache().Len(); got != 10 {
			t.Errorf("%d objects cached, want 10", got)
		}
		stop()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// A handler added while ranges are held is synced once it has returned from
// their acquisitions, not before.
func TestLateRegistrationSyncsAfterItsAcquisitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, 20)
		inf, _, stop := runInformer(t, w)
		defer stop()
		// One range: the handler blocked in it holds nothing another range's
		// delivery waits for (a lock would not be a durable block for synctest).
		if err := inf.SetRanges(t.Context(), shard.Split(1)); err != nil {
			t.Fatal(err)
		}
		block := make(chan struct{})
		var got atomic.Int64
		reg, err := inf.AddHandler(HandlerFuncs[cm]{AcquireFunc: func(cm) { got.Add(1); <-block }})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if reg.HasSynced() {
			t.Fatal("synced while the handler blocks in its first OnAcquire")
		}
		select {
		case <-reg.Synced():
			t.Fatal("Synced closed while the handler blocks in its first OnAcquire")
		default:
		}
		close(block)
		<-reg.Synced() // closes by itself: synctest fails the test on a deadlock
		if !reg.HasSynced() || got.Load() != 20 {
			t.Fatalf("after the acquisitions: synced %v, %d acquired, want true and 20", reg.HasSynced(), got.Load())
		}
	})
}

// A removed handler is told nothing more, in any range, and a registration
// of another Informer (or one removed already) is refused without touching
// the handler it belongs to.
func TestRemoveHandlerStopsItsCallsAndRefusesForeignRegistrations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, 40)
		inf, kept, stop := runInformer(t, w)
		defer stop()
		other, otherNotes, stopOther := runInformer(t, w)
		defer stopOther()
		halves := shard.Split(2)
		if err := inf.SetRanges(t.Context(), halves); err != nil {
			t.Fatal(err)
		}
		if err := other.SetRanges(t.Context(), halves); err != nil {
			t.Fatal(err)
		}
		gone := newNotes()
		reg, err := inf.AddHandler(gone.handler())
		if err != nil {
			t.Fatal(err)
		}
		<-reg.Synced()
		if got := len(gone.take()["acquire"]); got != 40 {
			t.Fatalf("the added handler acquired %d objects, want 40", got)
		}
		otherReg, err := other.AddHandler(newNotes().handler())
		if err != nil {
			t.Fatal(err)
		}
		if err := inf.RemoveHandler(otherReg); !errors.Is(err, informer.ErrUnknownRegistration) {
			t.Errorf("RemoveHandler of another Informer's registration: %v, want ErrUnknownRegistration", err)
		}
		if err := inf.RemoveHandler(reg); err != nil {
			t.Fatalf("RemoveHandler: %v", err)
		}
		if err := inf.RemoveHandler(reg); !errors.Is(err, informer.ErrUnknownRegistration) {
			t.Errorf("RemoveHandler twice: %v, want ErrUnknownRegistration", err)
		}
		kept.take()
		otherNotes.take()
		if _, err := w.src.Create(newCM("late")); err != nil {
			t.Fatal(err)
		}
		// The add is delivered before the release: if "late" falls in the half
		// being released, releasing first would take it away unannounced.
		synctest.Wait()
		if err := inf.SetRanges(t.Context(), halves[:1]); err != nil { // a release too
			t.Fatal(err)
		}
		synctest.Wait()
		if got := gone.take(); len(got) != 0 {
			t.Errorf("the removed handler was told %v", got)
		}
		if got := kept.take(); len(got["add"]) != 1 || len(got["release"]) == 0 {
			t.Errorf("the handler that stays was told %v, want the add and the releases", got)
		}
		if got := otherNotes.take(); !slices.Equal(got["add"], []string{"late"}) {
			t.Errorf("the other Informer's handler was told %v, want the add of late", got)
		}
	})
}

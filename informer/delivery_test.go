package informer

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/metrics"
)

type cmNote = notification[*corev1.ConfigMap]

// keyHistory generates n valid notifications for one key starting from
// present (or absent), the way an informer would send them, and returns
// them with the final state (nil when absent).
func keyHistory(rng *rand.Rand, name string, present bool, n int) ([]cmNote, *corev1.ConfigMap, *corev1.ConfigMap) {
	rv := 1
	var start, cur *corev1.ConfigMap
	if present {
		start = cm(name, rv)
		cur = start
	}
	var out []cmNote
	for range n {
		rv++
		if cur == nil {
			cur = cm(name, rv)
			out = append(out, cmNote{kind: addNotification, obj: cur})
			continue
		}
		if rng.IntN(3) == 0 {
			out = append(out, cmNote{kind: deleteNotification, obj: cur, unknown: rng.IntN(2) == 0})
			cur = nil
			continue
		}
		next := cm(name, rv)
		out = append(out, cmNote{kind: updateNotification, old: cur, obj: next})
		cur = next
	}
	return out, start, cur
}

func callNote(h Handler[*corev1.ConfigMap], n cmNote) {
	switch n.kind {
	case addNotification:
		h.OnAdd(n.obj, n.initial)
	case updateNotification:
		h.OnUpdate(n.old, n.obj)
	case deleteNotification:
		h.OnDelete(n.obj, n.unknown)
	}
}

// TestFoldKeepsHandlerViewEqualToReplay checks the merge rules on random
// histories: delivering the folded entry leaves a handler's view exactly
// where delivering every notification would, through calls that are valid
// for that view.
func TestFoldKeepsHandlerViewEqualToReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		present := rng.IntN(2) == 0
		notes, start, final := keyHistory(rng, "a", present, 1+rng.IntN(8))
		e := entry[*corev1.ConfigMap]{key: "ns/a"}
		for _, n := range notes {
			fold(&e, n)
		}
		r := newViewRecorder[*corev1.ConfigMap]()
		if start != nil {
			r.view["ns/a"] = start
		}
		callNote(r, e.pre)
		callNote(r, e.n)
		if errs := r.errors(); len(errs) > 0 {
			t.Fatalf("history %d (%v): invalid calls %v", i, notes, errs)
		}
		got, ok := r.view["ns/a"]
		if (final == nil) != !ok || ok && got != final {
			t.Fatalf("history %d: view holds %v (present %v), want %v", i, got, ok, final)
		}
		if e.pre.kind != noNotification && e.pre.kind != deleteNotification {
			t.Fatalf("history %d: pre is %v, only a delete may precede", i, e.pre.kind)
		}
	}
}

// recordingMetrics counts merges, panics and the largest backlog reported.
type recordingMetrics struct {
	merged, panics atomic.Int64
	maxBacklog     atomic.Int64
}

type counterFunc func()

func (f counterFunc) Inc() { f() }

type gaugeFunc func(float64)

func (f gaugeFunc) Set(v float64) { f(v) }

func (m *recordingMetrics) handler() metrics.HandlerMetrics {
	return metrics.HandlerMetrics{
		Merged: counterFunc(func() { m.merged.Add(1) }),
		Panics: counterFunc(func() { m.panics.Add(1) }),
		Backlog: gaugeFunc(func(v float64) {
			for {
				cur := m.maxBacklog.Load()
				if int64(v) <= cur || m.maxBacklog.CompareAndSwap(cur, int64(v)) {
					return
				}
			}
		}),
	}.WithDefaults()
}

func newTestListener(h Handler[*corev1.ConfigMap], m metrics.HandlerMetrics, cached int64, report func(error)) *listener[*corev1.ConfigMap] {
	var c atomic.Int64
	c.Store(cached)
	if report == nil {
		report = func(error) {}
	}
	return newListener(h, &Registration{name: "test", synced: make(chan struct{})},
		clocktesting.NewFakePassiveClock(fixedTime), m, false, report, &c)
}

// TestListenerBacklogStaysBoundedByCachedObjects feeds a handler that is
// not running 200,000 random changes over 50 objects: its backlog never
// passes the number of objects (the merge threshold, lowered here), and
// once it runs it reaches exactly the final state through valid calls.
func TestListenerBacklogStaysBoundedByCachedObjects(t *testing.T) {
	const objects = 50
	synctest.Test(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		r := newViewRecorder[*corev1.ConfigMap]()
		var m recordingMetrics
		l := newTestListener(r, m.handler(), objects, nil)
		l.minThreshold = 1

		truth := map[string]*corev1.ConfigMap{}
		rv := 0
		maxBacklog := 0
		for range 200000 {
			rv++
			name := fmt.Sprintf("o%d", rng.IntN(objects))
			k := "ns/" + name
			cur, ok := truth[k]
			var n cmNote
			switch {
			case !ok:
				truth[k] = cm(name, rv)
				n = cmNote{kind: addNotification, obj: truth[k]}
			case rng.IntN(10) == 0:
				delete(truth, k)
				n = cmNote{kind: deleteNotification, obj: cur}
			default:
				truth[k] = cm(name, rv)
				n = cmNote{kind: updateNotification, old: cur, obj: truth[k]}
			}
			l.add(k, n)
			maxBacklog = max(maxBacklog, l.backlog())
		}
		// A re-created object may stand for two calls (its delete, then
		// its add), so the bound is twice the objects in the worst case;
		// in entries it is the number of objects.
		if maxBacklog > 2*objects {
			t.Errorf("backlog reached %d calls, want at most %d", maxBacklog, 2*objects)
		}
		if entries := len(l.queue) - l.head - l.dead; entries > objects {
			t.Errorf("%d pending entries, want at most %d", entries, objects)
		}
		if m.merged.Load() == 0 {
			t.Errorf("no merge counted")
		}

		go l.run()
		synctest.Wait()
		if errs := r.errors(); len(errs) > 0 {
			t.Fatalf("invalid calls: %v", errs[:min(5, len(errs))])
		}
		if got, want := r.versions(), versionsOf(mapsValues(truth)); !maps.Equal(got, want) {
			t.Errorf("handler view differs from the truth:\n got %v\nwant %v", got, want)
		}
		l.stop()
		synctest.Wait()
	})
}

func mapsValues[T any](m map[string]T) []T {
	out := make([]T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestListenerDeliversEverythingInOrderBelowThreshold checks that a handler
// that keeps up (backlog under the threshold) sees every notification, in
// the order given.
func TestListenerDeliversEverythingInOrderBelowThreshold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newViewRecorder[*corev1.ConfigMap]()
		r.recordOrder = true
		var m recordingMetrics
		l := newTestListener(r, m.handler(), 0, nil)
		go l.run()
		var want []string
		objs := map[string]*corev1.ConfigMap{}
		for i := range 1000 {
			name := fmt.Sprintf("o%d", i%7)
			k := "ns/" + name
			if old, ok := objs[k]; ok {
				objs[k] = cm(name, i)
				l.add(k, cmNote{kind: updateNotification, old: old, obj: objs[k]})
				want = append(want, "update "+k)
			} else {
				objs[k] = cm(name, i)
				l.add(k, cmNote{kind: addNotification, obj: objs[k]})
				want = append(want, "add "+k)
			}
			if i%100 == 0 {
				synctest.Wait()
			}
		}
		synctest.Wait()
		r.mu.Lock()
		got := r.order
		r.mu.Unlock()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("calls out of order or missing: got %d calls, want %d", len(got), len(want))
		}
		if m.merged.Load() != 0 {
			t.Errorf("%d merges below the threshold", m.merged.Load())
		}
		l.stop()
		synctest.Wait()
	})
}

// TestListenerRecoversPanicsAndKeepsDelivering checks that a panicking
// handler is reported with its name and gets the next notification.
func TestListenerRecoversPanicsAndKeepsDelivering(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reported []error
		var m recordingMetrics
		var calls int
		boom := errors.New("boom")
		h := HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(obj *corev1.ConfigMap, _ bool) {
			calls++
			if obj.Name == "bad" {
				panic(boom)
			}
		}}
		l := newTestListener(h, m.handler(), 0, func(err error) { reported = append(reported, err) })
		go l.run()
		l.add("ns/bad", cmNote{kind: addNotification, obj: cm("bad", 1)})
		l.add("ns/good", cmNote{kind: addNotification, obj: cm("good", 2)})
		l.markSynced()
		synctest.Wait()
		if calls != 2 {
			t.Errorf("%d calls, want 2", calls)
		}
		var pe *HandlerPanicError
		if len(reported) != 1 || !errors.As(reported[0], &pe) || pe.Handler != "test" || !errors.Is(reported[0], boom) {
			t.Errorf("reported %v, want one *HandlerPanicError of handler test wrapping boom", reported)
		}
		if m.panics.Load() != 1 {
			t.Errorf("panics metric %d, want 1", m.panics.Load())
		}
		if !l.reg.HasSynced() {
			t.Errorf("registration not synced after its initial notifications, one of which panicked")
		}
		l.stop()
		synctest.Wait()
	})
}

// TestListenerSyncsOnlyAfterInitialNotificationsReturn checks per-handler
// sync: not while an initial notification is pending or in progress.
func TestListenerSyncsOnlyAfterInitialNotificationsReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newViewRecorder[*corev1.ConfigMap]()
		r.gate = make(chan struct{})
		l := newTestListener(r, metrics.HandlerMetrics{}.WithDefaults(), 0, nil)
		go l.run()
		l.add("ns/a", cmNote{kind: addNotification, obj: cm("a", 1), initial: true})
		l.add("ns/b", cmNote{kind: addNotification, obj: cm("b", 2), initial: true})
		l.markSynced()
		l.add("ns/c", cmNote{kind: addNotification, obj: cm("c", 3)})
		synctest.Wait()
		if l.reg.HasSynced() {
			t.Fatal("synced with both initial adds pending")
		}
		r.gate <- struct{}{}
		synctest.Wait()
		if l.reg.HasSynced() {
			t.Fatal("synced with one initial add in progress")
		}
		r.gate <- struct{}{}
		synctest.Wait()
		if !l.reg.HasSynced() {
			t.Fatal("not synced after both initial adds returned")
		}
		close(r.gate)
		synctest.Wait()
		l.stop()
		synctest.Wait()
	})
}

// TestListenerStopDropsPendingAndExits checks that stop ends delivery at
// once: no call starts after it, and the goroutine exits.
func TestListenerStopDropsPendingAndExits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newViewRecorder[*corev1.ConfigMap]()
		r.gate = make(chan struct{})
		l := newTestListener(r, metrics.HandlerMetrics{}.WithDefaults(), 0, nil)
		exited := make(chan struct{})
		go func() { l.run(); close(exited) }()
		for i := range 10 {
			l.add(fmt.Sprintf("ns/o%d", i), cmNote{kind: addNotification, obj: cm(fmt.Sprintf("o%d", i), i)})
		}
		synctest.Wait() // the first add is in progress, blocked on gate
		l.stop()
		close(r.gate)
		<-exited
		if n := r.calls.Load(); n != 1 {
			t.Errorf("%d calls, want only the one in progress at stop", n)
		}
		l.add("ns/late", cmNote{kind: addNotification, obj: cm("late", 99)})
		if l.backlog() != 0 {
			t.Errorf("a stopped listener queued a notification")
		}
	})
}

// TestListenerBacklogGrowsByDoubling: a handler that is not running falls
// 100,000 initial adds behind; the arrays that held them add up to about
// twice their number (append's quarter steps made about five times), the
// garbage an initial list leaves beside the cache.
func TestListenerBacklogGrowsByDoubling(t *testing.T) {
	const n = 100_000
	l := newTestListener(HandlerFuncs[*corev1.ConfigMap]{}, metrics.HandlerMetrics{}.WithDefaults(), n, nil)
	batches := make([][]keyedNotification[*corev1.ConfigMap], n/initialBatch)
	for b := range batches {
		batches[b] = make([]keyedNotification[*corev1.ConfigMap], initialBatch)
		for i := range batches[b] {
			o := cm(fmt.Sprintf("o%d-%d", b, i), 1)
			batches[b][i] = keyedNotification[*corev1.ConfigMap]{key: "ns/" + o.Name, n: cmNote{kind: addNotification, obj: o, initial: true}}
		}
	}
	made, last := 0, 0 // entries of every array the queue had, from the second batch on
	for _, batch := range batches {
		l.addAll(batch)
		if c := cap(l.queue); c != last {
			made, last = made+c, c
		}
	}
	if len(l.queue) != len(batches)*initialBatch {
		t.Fatalf("%d entries queued, want %d", len(l.queue), len(batches)*initialBatch)
	}
	if made > 5*len(l.queue)/2 {
		t.Errorf("a backlog of %d entries was held in arrays of %d entries in all, want at most 2.5 times as many", len(l.queue), made)
	}
}

package informer

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// An initial list several batches long, with a handler added while it is
// (possibly) being popped: every handler sees each object once, and syncs.
func TestSharedInitialListInBatchesKeepsEveryHandlerConsistent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 3*initialBatch + 17
		early, late := newViewRecorder[*corev1.ConfigMap](), newViewRecorder[*corev1.ConfigMap]()
		var regEarly, regLate *Registration
		lateAdded := make(chan struct{})
		h := startShared(t, n, Options[*corev1.ConfigMap]{}, func(inf *cmInformer) {
			var err error
			if regEarly, err = inf.AddHandler(early, HandlerOptions{}); err != nil {
				t.Fatal(err)
			}
			go func() {
				defer close(lateAdded)
				for inf.cache.cached.Load() < initialBatch+5 {
					runtime.Gosched()
				}
				reg, err := inf.AddHandler(late, HandlerOptions{})
				if err != nil {
					t.Error(err)
				}
				regLate = reg
			}()
		})
		defer h.stop()
		<-lateAdded
		synctest.Wait()
		h.update("o1")
		h.update(fmt.Sprintf("o%d", n-1))
		synctest.Wait()
		if !regEarly.HasSynced() || !regLate.HasSynced() {
			t.Fatalf("registrations synced: early %v, late %v", regEarly.HasSynced(), regLate.HasSynced())
		}
		if early.adds != n || early.initial != n || early.updates != 2 {
			t.Errorf("early: %d adds (%d initial), %d updates; want %d (%d), 2", early.adds, early.initial, early.updates, n, n)
		}
		for name, r := range map[string]*viewRecorder[*corev1.ConfigMap]{"early": early, "late": late} {
			if errs := r.errors(); len(errs) > 0 {
				t.Errorf("%s: invalid calls: %v", name, errs)
			}
			if got, want := r.versions(), h.sourceVersions(); !maps.Equal(got, want) {
				t.Errorf("%s: handler view differs from the source", name)
			}
		}
	})
}

// pendingKeys lists the keys of l's pending notifications, in order.
func pendingKeys[T cache.Object](l *listener[T]) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var keys []string
	for _, e := range l.queue[l.head:] {
		keys = append(keys, e.key)
	}
	return keys
}

// Batching the initial adds must not change what each listener is handed:
// a listener added mid-list gets the cached objects (including any not yet
// handed out) once, then the rest; an update flushes the adds before it.
func TestSharedInitialAddsReachListenersOnceAndInOrder(t *testing.T) {
	src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
	if err != nil {
		t.Fatal(err)
	}
	inf, err := NewShared(Options[*corev1.ConfigMap]{Source: src}) // never run
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddHandler(newViewRecorder[*corev1.ConfigMap](), HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	var want []string
	pop := func(i int, initial bool) {
		o := cm(fmt.Sprintf("o%d", i), 1)
		if err := inf.cache.process(keyOf(o), cache.Deltas[*corev1.ConfigMap]{{Type: cache.Replaced, Object: o}}, initial); err != nil {
			t.Fatal(err)
		}
		want = append(want, keyOf(o))
	}
	for i := range initialBatch + 44 {
		pop(i, true)
	}
	if _, err := inf.AddHandler(newViewRecorder[*corev1.ConfigMap](), HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	lateFrom := len(want)
	for i := initialBatch + 44; i < 2*initialBatch+10; i++ {
		pop(i, true)
	}
	upd := cm("o3", 2)
	if err := inf.cache.process(keyOf(upd), cache.Deltas[*corev1.ConfigMap]{{Type: cache.Updated, Object: upd}}, false); err != nil {
		t.Fatal(err)
	}
	want = append(want, keyOf(upd))
	pop(2*initialBatch+10, true)
	inf.handlers.markSynced()

	inf.handlers.mu.Lock()
	ls := slices.Clone(inf.handlers.listeners)
	inf.handlers.mu.Unlock()
	if got := pendingKeys(ls[0]); !slices.Equal(got, want) {
		t.Errorf("early listener: %d notifications, want %d in pop order", len(got), len(want))
	}
	got := pendingKeys(ls[1])
	snapshot := slices.Sorted(slices.Values(got[:lateFrom]))
	if !slices.Equal(snapshot, slices.Sorted(slices.Values(want[:lateFrom]))) || !slices.Equal(got[lateFrom:], want[lateFrom:]) {
		t.Errorf("late listener: got %d notifications, want the %d cached then the %d after", len(got), lateFrom, len(want)-lateFrom)
	}
}

// lists counts the lists the informer made: plain, or streamed (a watch
// with initial events).
func (h *harness) lists() int {
	n := len(h.src.ListCalls())
	for _, w := range h.src.WatchCalls() {
		if w.SendInitialEvents {
			n++
		}
	}
	return n
}

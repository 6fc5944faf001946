package informer

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// reservingIndexer records the lists the informer offers its indexer.
type reservingIndexer struct {
	cache.Indexer[*corev1.ConfigMap]
	calls, n atomic.Int64
}

func (g *reservingIndexer) Reserve(objs []*corev1.ConfigMap) {
	g.calls.Add(1)
	g.n.Store(int64(len(objs)))
	g.Indexer.(interface{ Reserve([]*corev1.ConfigMap) }).Reserve(objs)
}

func (g *reservingIndexer) Len() int { return len(g.Indexer.ListKeys()) }

func TestSharedOffersIndexerOnlyTheListThatFillsAnEmptyCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g *reservingIndexer
		r := newViewRecorder[*corev1.ConfigMap]()
		h := startShared(t, 50, SharedOptions[*corev1.ConfigMap]{}, func(inf *cmInformer) {
			g = &reservingIndexer{Indexer: inf.indexer}
			inf.indexer = g
			if _, err := inf.AddHandler(r, HandlerOptions{}); err != nil {
				t.Fatal(err)
			}
		})
		defer h.stop()
		synctest.Wait()
		h.update("o1")
		synctest.Wait()
		// A relist (the watch expired) finds the cache full: no second
		// hint.
		lists := h.lists()
		h.src.SendError(listwatch.ErrExpired)
		h.update("o2")
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := h.lists(); got != lists+1 {
			t.Fatalf("%d lists after the expired watch, want 1", got-lists)
		}
		if g.calls.Load() != 1 || g.n.Load() != 50 {
			t.Fatalf("Reserve called %d times, last with %d objects; want once with 50", g.calls.Load(), g.n.Load())
		}
		if r.adds != 50 || r.initial != 50 || r.updates < 2 {
			t.Fatalf("%d adds (%d initial), %d updates; want 50 (50), at least 2", r.adds, r.initial, r.updates)
		}
		if got, want := h.cacheVersions(), h.sourceVersions(); !maps.Equal(got, want) {
			t.Fatalf("cache %v, source %v", got, want)
		}
	})
}

// An initial list several batches long, with a handler added while it is
// (possibly) being popped: every handler sees each object once, and syncs.
func TestSharedInitialListInBatchesKeepsEveryHandlerConsistent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 3*initialBatch + 17
		early, late := newViewRecorder[*corev1.ConfigMap](), newViewRecorder[*corev1.ConfigMap]()
		var regEarly, regLate *Registration
		lateAdded := make(chan struct{})
		h := startShared(t, n, SharedOptions[*corev1.ConfigMap]{}, func(inf *cmInformer) {
			var err error
			if regEarly, err = inf.AddHandler(early, HandlerOptions{}); err != nil {
				t.Fatal(err)
			}
			go func() {
				defer close(lateAdded)
				for inf.cached.Load() < initialBatch+5 {
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
	inf, err := NewShared(SharedOptions[*corev1.ConfigMap]{Source: src}) // never run
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddHandler(newViewRecorder[*corev1.ConfigMap](), HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	var want []string
	pop := func(i int, initial bool) {
		o := cm(fmt.Sprintf("o%d", i), 1)
		if err := inf.process(keyOf(o), cache.Deltas[*corev1.ConfigMap]{{Type: cache.Replaced, Object: o}}, initial); err != nil {
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
	if err := inf.process(keyOf(upd), cache.Deltas[*corev1.ConfigMap]{{Type: cache.Updated, Object: upd}}, false); err != nil {
		t.Fatal(err)
	}
	want = append(want, keyOf(upd))
	pop(2*initialBatch+10, true)
	inf.markSynced()

	inf.mu.Lock()
	ls := slices.Clone(inf.listeners)
	inf.mu.Unlock()
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

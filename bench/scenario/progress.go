package scenario

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// progress follows one handler until it has seen the final version of every
// pod, and checks that, per pod, versions only move forward.
//
// Final versions are recognised by generation: the initial list is
// generation 0 and each update adds one (see podUpdate), so a stream of k
// updates per pod ends at generation k. Counting final versions rather
// than notifications works on both sides even when a handler is handed
// merged notifications (kinformer merges a lagging handler's backlog).
type progress struct {
	final int64
	left  atomic.Int64
	// done is closed when left reaches zero.
	done     chan struct{}
	seen     atomic.Int64 // notifications handled
	disorder atomic.Int64 // updates whose new version was not newer
}

func newProgress(pods int, final int64) *progress {
	p := &progress{final: final, done: make(chan struct{})}
	p.left.Store(int64(pods))
	if pods == 0 {
		close(p.done)
	}
	return p
}

func (p *progress) saw(pod *corev1.Pod) {
	p.seen.Add(1)
	if pod.Generation == p.final && p.left.Add(-1) == 0 {
		close(p.done)
	}
}

// handler returns a handler reporting to p.
func (p *progress) handler() podHandler {
	return podHandler{
		add: p.saw,
		update: func(old, new *corev1.Pod) {
			if new.Generation <= old.Generation {
				p.disorder.Add(1)
			}
			p.saw(new)
		},
		delete: p.saw,
	}
}

// wait blocks until every progress in ps is done, or fails after timeout
// or when ctx ends.
func waitAll(ctx context.Context, timeout time.Duration, what string, ps ...*progress) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for i, p := range ps {
		select {
		case <-p.done:
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return fmt.Errorf("%s: handler %d still misses %d of its final versions after %v",
				what, i, p.left.Load(), timeout)
		}
	}
	return nil
}

// checkOrder returns an ErrMismatch when a handler saw a pod go backwards.
func checkOrder(ps ...*progress) error {
	for i, p := range ps {
		if n := p.disorder.Load(); n > 0 {
			return fmt.Errorf("%w: handler %d saw %d updates out of order", ErrMismatch, i, n)
		}
	}
	return nil
}

// updateStream returns the event function of a stream of updates cycling
// over items: event i updates pod i%len(items) to version rv+1+i, as a
// podUpdate of the pod's previous version. It builds each object when
// asked and keeps only the latest version of each pod, so it must be
// called with i = 0, 1, 2... in order (as a watch from the list's version
// does).
func updateStream(items []*corev1.Pod, rv int64) func(i int) *corev1.Pod {
	cur := slices.Clone(items)
	return func(i int) *corev1.Pod {
		k := i % len(cur)
		p := podUpdate(cur[k], rv+1+int64(i))
		cur[k] = p
		return p
	}
}

// prebuiltUpdates builds the first n events of updateStream ahead of time,
// so a timed run pays nothing for them.
func prebuiltUpdates(items []*corev1.Pod, rv int64, n int) []*corev1.Pod {
	next := updateStream(items, rv)
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = next(i)
	}
	return out
}

// heapAfterGC returns the live heap, after collecting garbage twice (the
// second collection frees what the first one's finalizers released).
func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// fixture keeps the most recently built input of a scenario, so that the
// runs of a scenario (which alternate sides) share one input instead of
// each building its own. Only one is kept: the next scenario's input
// replaces it, so inputs do not pile up in the heap.
var fixture struct {
	mu  sync.Mutex
	key string
	val any
}

// cachedFixture returns the value built by build for key, building it if
// the kept fixture is for another key.
func cachedFixture[V any](key string, build func() V) V {
	fixture.mu.Lock()
	defer fixture.mu.Unlock()
	if fixture.key == key {
		return fixture.val.(V)
	}
	fixture.key, fixture.val = "", nil // let the old one go first
	v := build()
	fixture.key, fixture.val = key, v
	return v
}

// dropFixture lets the kept fixture be collected.
func dropFixture() {
	fixture.mu.Lock()
	defer fixture.mu.Unlock()
	fixture.key, fixture.val = "", nil
}

package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Scenario 5: one handler blocked while 1,000,000 updates hit 10,000 pods.
//
// The informer lists 10,000 pods and has two handlers: one blocks in its
// first call until the end of the run, the other keeps up and tells when
// the informer has handed out every update. The watch then streams
// 1,000,000 updates (100 per pod), each a new object built on the fly, as
// a real watch decodes them. The value is the growth of the live heap
// (after GC) from just before the updates to just after the normal handler
// has seen the last version of every pod: what the blocked handler's
// backlog costs. client-go queues every notification for the blocked
// handler; kinformer merges a lagging handler's notifications per pod.
//
// Then the blocked handler is released and must reach the last version of
// every pod too; both caches must end the same (the digest). A growth
// under 1 KB is reported as 1 KB, so the ratio stays finite.
func init() {
	Register(Scenario{
		Name:   "blocked-handler",
		Unit:   "MB",
		Target: Target{Op: AtMost, Value: 0.1},
		Run:    runBlockedHandler,
	})
}

func blockedHandlerSize(size Size) (pods, updates int) {
	if size == Small {
		return 200, 20_000
	}
	return 10_000, 1_000_000
}

func runBlockedHandler(ctx context.Context, side Side, size Size) (Result, error) {
	n, m := blockedHandlerSize(size)
	list, items := podList(n)
	release := make(chan struct{})
	src := &podSource{
		list:   func() (*corev1.PodList, []*corev1.Pod) { return list, items },
		rv:     int64(n),
		events: m,
		event:  updateStream(items, int64(n)),
		start:  release,
	}
	inf, err := newPodInformer(side, src)
	if err != nil {
		return Result{}, err
	}
	final := int64(m / n)
	unblock := make(chan struct{})
	blocked := newProgress(n, final)
	bh := blocked.handler()
	if err := inf.addHandler(podHandler{
		add:    func(p *corev1.Pod) { <-unblock; bh.add(p) },
		update: func(o, p *corev1.Pod) { <-unblock; bh.update(o, p) },
		delete: func(p *corev1.Pod) { <-unblock; bh.delete(p) },
	}); err != nil {
		return Result{}, err
	}
	synced, normal := newProgress(n, 0), newProgress(n, final)
	h := normal.handler()
	add := h.add
	h.add = func(pod *corev1.Pod) { synced.saw(pod); add(pod) }
	if err := inf.addHandler(h); err != nil {
		return Result{}, err
	}
	stop := startInformer(ctx, inf)
	werr := waitAll(ctx, 5*time.Minute, "initial list", synced)
	var growth int64
	if werr == nil {
		before := heapAfterGC()
		close(release)
		werr = waitAll(ctx, 10*time.Minute, "updates", normal)
		growth = heapAfterGC() - before
	}
	close(unblock)
	if werr == nil {
		werr = waitAll(ctx, 10*time.Minute, "blocked handler after release", blocked)
	}
	digest := cacheDigest(inf.cached())
	if err := errors.Join(werr, stop(), checkOrder(normal, blocked)); err != nil {
		return Result{}, err
	}
	if got := normal.seen.Load(); got < int64(n+m) && side == ClientGo {
		return Result{}, fmt.Errorf("%w: the normal handler saw %d notifications, want %d", ErrMismatch, got, n+m)
	}
	return Result{Value: float64(max(growth, 1000)) / 1e6, Digest: digest}, nil
}

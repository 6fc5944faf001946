package scenario

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Scenario 1: initial sync of 100,000 pods from an in-memory source, with
// two handlers.
//
// The source lists every pod at once (no pagination on either side; see
// podSource) and then watches without events. The value is the time from
// the informer's start until both handlers have been handed every pod.
// Both caches must then hold the same versions of the same pods (the
// digest).
func init() {
	Register(Scenario{
		Name:   "initial-sync",
		Unit:   "ms",
		Target: Target{Op: AtMost, Value: 0.33},
		Run:    runInitialSync,
	})
}

const initialSyncHandlers = 2

func initialSyncPods(size Size) int {
	if size == Small {
		return 500
	}
	return 100_000
}

type podListFixture struct {
	list  *corev1.PodList
	items []*corev1.Pod
}

func sharedPodList(n int) podListFixture {
	return cachedFixture("podlist/"+strconv.Itoa(n), func() podListFixture {
		list, items := podList(n)
		return podListFixture{list, items}
	})
}

func runInitialSync(ctx context.Context, side Side, size Size) (Result, error) {
	n := initialSyncPods(size)
	fx := sharedPodList(n)
	src := &podSource{
		list: func() (*corev1.PodList, []*corev1.Pod) { return fx.list, fx.items },
		rv:   int64(n),
	}
	inf, err := newPodInformer(side, src)
	if err != nil {
		return Result{}, err
	}
	var ps []*progress
	for range initialSyncHandlers {
		p := newProgress(n, 0)
		ps = append(ps, p)
		if err := inf.addHandler(p.handler()); err != nil {
			return Result{}, err
		}
	}
	start := time.Now()
	stop := startInformer(ctx, inf)
	werr := waitAll(ctx, 5*time.Minute, "initial sync", ps...)
	elapsed := time.Since(start)
	digest := cacheDigest(inf.cached())
	if err := errors.Join(werr, stop()); err != nil {
		return Result{}, err
	}
	for i, p := range ps {
		if got := p.seen.Load(); got != int64(n) {
			return Result{}, fmt.Errorf("%w: handler %d saw %d notifications, want %d", ErrMismatch, i, got, n)
		}
	}
	return Result{Value: float64(elapsed.Microseconds()) / 1e3, Digest: digest}, nil
}

package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Scenario 2: 200,000 updates through the watch, with four handlers.
//
// The informer lists 10,000 pods, and once every handler has seen them the
// watch releases 200,000 updates (20 per pod, round robin), built ahead of
// time so the run pays only for the informer. The value is the time from
// the release until every handler has seen the last version of every pod.
// Each handler checks that, per pod, versions only move forward; both
// caches must end with the same versions (the digest).
func init() {
	Register(Scenario{
		Name:   "watch-updates",
		Unit:   "ms",
		Target: Target{Op: AtMost, Value: 0.33},
		Run:    runWatchUpdates,
	})
}

const watchUpdatesHandlers = 4

func watchUpdatesSize(size Size) (pods, updates int) {
	if size == Small {
		return 200, 2_000
	}
	return 10_000, 200_000
}

type updatesFixture struct {
	podListFixture
	updates []*corev1.Pod
}

// sharedUpdates returns pods and prebuilt updates, kept for the runs of
// one scenario.
func sharedUpdates(pods, updates int) updatesFixture {
	return cachedFixture(fmt.Sprintf("updates/%d/%d", pods, updates), func() updatesFixture {
		list, items := podList(pods)
		return updatesFixture{podListFixture{list, items}, prebuiltUpdates(items, int64(pods), updates)}
	})
}

// source serves the fixture: the list, then its updates as watch events,
// held back until release is closed and paced to rate events per second
// when rate is positive.
func (fx updatesFixture) source(release <-chan struct{}, rate int) *podSource {
	return &podSource{
		list:   func() (*corev1.PodList, []*corev1.Pod) { return fx.list, fx.items },
		rv:     int64(len(fx.items)),
		events: len(fx.updates),
		event:  func(i int) *corev1.Pod { return fx.updates[i] },
		start:  release,
		rate:   rate,
	}
}

func runWatchUpdates(ctx context.Context, side Side, size Size) (Result, error) {
	n, m := watchUpdatesSize(size)
	fx := sharedUpdates(n, m)
	release := make(chan struct{})
	src := fx.source(release, 0)
	return timeUpdates(ctx, side, src, release, n, m, watchUpdatesHandlers)
}

// timeUpdates runs an informer over src with handlers handlers, waits for
// the initial list to reach them, closes release (src.start) and times
// until every handler has seen the final version of every pod.
func timeUpdates(ctx context.Context, side Side, src *podSource, release chan struct{}, n, m, handlers int) (Result, error) {
	inf, err := newPodInformer(side, src)
	if err != nil {
		return Result{}, err
	}
	final := int64(m / n)
	var synced, ps []*progress
	for range handlers {
		s, p := newProgress(n, 0), newProgress(n, final)
		synced, ps = append(synced, s), append(ps, p)
		h := p.handler()
		add := h.add
		h.add = func(pod *corev1.Pod) { s.saw(pod); add(pod) }
		if err := inf.addHandler(h); err != nil {
			return Result{}, err
		}
	}
	stop := startInformer(ctx, inf)
	werr := waitAll(ctx, 5*time.Minute, "initial list", synced...)
	var elapsed time.Duration
	if werr == nil {
		start := time.Now()
		close(release)
		werr = waitAll(ctx, 5*time.Minute, "updates", ps...)
		elapsed = time.Since(start)
	}
	digest := cacheDigest(inf.cached())
	if err := errors.Join(werr, stop(), checkOrder(ps...)); err != nil {
		return Result{}, err
	}
	return Result{Value: float64(elapsed.Microseconds()) / 1e3, Digest: digest}, nil
}

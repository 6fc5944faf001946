package scenario

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Scenario 4: lister reads per second, with 8 readers, while a writer
// streams updates.
//
// The informer lists 10,000 pods; then 8 readers Get pods by namespace and
// name through the side's lister (client-go's PodLister, kinformer's
// Lister), each sweeping the pods in its own order, while the watch
// streams 50,000 updates (prebuilt) into the cache and one handler, paced
// at 25,000 updates per second on both sides, a rate both keep up with
// while readers run, so that both writers do the same work per second and
// the read window (about 2 s) does not depend on how fast a side writes. The value is reads per second, from the release
// of the updates until the handler has seen the last version of every pod.
// Every read must find its pod; both caches must end the same (the
// digest).
func init() {
	Register(Scenario{
		Name:   "lister-reads",
		Unit:   "reads/s",
		Target: Target{Op: AtLeast, Value: 2.0},
		Run:    runListerReads,
	})
}

const (
	listerReaders   = 8
	listerWriteRate = 25_000 // updates per second
)

func listerReadsSize(size Size) (pods, updates int) {
	if size == Small {
		return 200, 1_000
	}
	return 10_000, 50_000
}

func runListerReads(ctx context.Context, side Side, size Size) (Result, error) {
	n, m := listerReadsSize(size)
	fx := sharedUpdates(n, m)
	release := make(chan struct{})
	src := fx.source(release, listerWriteRate)
	inf, err := newPodInformer(side, src)
	if err != nil {
		return Result{}, err
	}
	synced, p := newProgress(n, 0), newProgress(n, int64(m/n))
	h := p.handler()
	add := h.add
	h.add = func(pod *corev1.Pod) { synced.saw(pod); add(pod) }
	if err := inf.addHandler(h); err != nil {
		return Result{}, err
	}
	stop := startInformer(ctx, inf)
	werr := waitAll(ctx, 5*time.Minute, "initial list", synced)
	var (
		elapsed time.Duration
		reads   atomic.Int64
		missed  atomic.Int64
	)
	if werr == nil {
		var wg sync.WaitGroup
		start := time.Now()
		for r := range listerReaders {
			wg.Go(func() {
				var count, miss int64
				// Readers step through the pods with different
				// strides (coprime with n) so they do not walk in
				// lockstep.
				stride := []int{1, 7, 11, 13, 17, 19, 23, 29}[r]
				for k := r; ; k += stride {
					if count&255 == 0 {
						select {
						case <-p.done:
							reads.Add(count)
							missed.Add(miss)
							return
						case <-ctx.Done():
							reads.Add(count)
							missed.Add(miss)
							return
						default:
						}
					}
					pod := fx.items[k%n]
					if got, err := inf.get(pod.Namespace, pod.Name); err != nil || got == nil {
						miss++
					}
					count++
				}
			})
		}
		close(release)
		werr = waitAll(ctx, 5*time.Minute, "updates", p)
		elapsed = time.Since(start)
		wg.Wait()
	}
	digest := cacheDigest(inf.cached())
	if err := errors.Join(werr, stop(), checkOrder(p)); err != nil {
		return Result{}, err
	}
	if miss := missed.Load(); miss > 0 {
		return Result{}, fmt.Errorf("%w: %d of %d reads did not find their pod", ErrMismatch, miss, reads.Load())
	}
	return Result{Value: float64(reads.Load()) / elapsed.Seconds(), Digest: digest}, nil
}

package scenario

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Scenario 3: cache overhead per object at 100,000 pods.
//
// The overhead is what an informer holding N pods adds to the pods
// themselves: the live heap (after GC) with a synced informer and one
// handler, minus the live heap before it, minus the heap of the same N pods
// held alone in a plain slice, divided by N.
//
// Each List builds its pods afresh and keeps no reference to them, in the
// form each side's real source decodes them into (client-go: a PodList,
// whose items its reflector copies into separate allocations; kinformer: a
// page of separately allocated pods), so that after the sync the informer
// holds the only reference to them and what it keeps is measured, not the
// input.
func init() {
	Register(Scenario{
		Name:   "cache-overhead",
		Unit:   "B/object",
		Target: Target{Op: AtMost, Value: 0.5},
		Run:    runCacheOverhead,
	})
}

func runCacheOverhead(ctx context.Context, side Side, size Size) (Result, error) {
	n := initialSyncPods(size)
	dropFixture()
	base := heapAfterGC()
	alone := make([]*corev1.Pod, n)
	for i := range alone {
		alone[i] = newPod(i, int64(i+1))
	}
	objects := heapAfterGC() - base
	runtime.KeepAlive(alone)
	alone = nil

	src := &podSource{
		list: func() (*corev1.PodList, []*corev1.Pod) {
			list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(n)}}
			if side == ClientGo {
				list.Items = make([]corev1.Pod, n)
				for i := range n {
					list.Items[i] = *newPod(i, int64(i+1))
				}
				return list, nil
			}
			items := make([]*corev1.Pod, n)
			for i := range n {
				items[i] = newPod(i, int64(i+1))
			}
			return list, items
		},
		rv: int64(n),
	}
	base = heapAfterGC()
	inf, err := newPodInformer(side, src)
	if err != nil {
		return Result{}, err
	}
	p := newProgress(n, 0)
	if err := inf.addHandler(p.handler()); err != nil {
		return Result{}, err
	}
	stop := startInformer(ctx, inf)
	werr := waitAll(ctx, 5*time.Minute, "initial sync", p)
	held := heapAfterGC() - base
	digest := cacheDigest(inf.cached())
	if err := errors.Join(werr, stop()); err != nil {
		return Result{}, err
	}
	perObject := float64(held-objects) / float64(n)
	if perObject <= 0 {
		if size == Full {
			return Result{}, fmt.Errorf("implausible overhead: informer holds %d B, pods alone %d B", held, objects)
		}
		// At the small size the heap's noise can exceed the overhead.
		perObject = 1
	}
	return Result{Value: perObject, Digest: digest}, nil
}

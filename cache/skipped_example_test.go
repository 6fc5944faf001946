package cache_test

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/cache"
)

// A list with one object the Transform rejects: Replace queues the rest
// and reports the one it skipped.
func ExampleSkippedError() {
	errNoApp := errors.New("no app label")
	queue := cache.NewDeltaFIFO(cache.DeltaFIFOOptions[*corev1.Pod]{
		Transform: func(p *corev1.Pod) (*corev1.Pod, error) {
			if p.Labels["app"] == "" {
				return nil, errNoApp
			}
			return p, nil
		},
	})
	err := queue.Replace([]*corev1.Pod{pod("default", "a", "1", "x"), pod("default", "b", "1", ""), pod("default", "c", "1", "x")}, "1")

	var skipped *cache.SkippedError
	if errors.As(err, &skipped) { // errors.Is(err, cache.ErrSkipped) too
		fmt.Println(len(skipped.Errs), "of", skipped.Total, "skipped:", errors.Is(err, errNoApp))
		fmt.Println(skipped.Errs[0])
	}
	for queue.Len() > 0 {
		_, _ = queue.Pop(context.Background(), func(key string, _ cache.Deltas[*corev1.Pod], _ bool) error {
			fmt.Println("popped", key)
			return nil
		})
	}
	fmt.Println("synced:", queue.HasSynced())
	// Output:
	// 1 of 3 skipped: true
	// item 1 ("default/b"): transform: no app label
	// popped default/a
	// popped default/c
	// synced: true
}

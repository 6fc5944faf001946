package workqueue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/workqueue"
)

func Example() {
	q := workqueue.New(workqueue.Options[string]{Name: "pods"})
	for _, key := range []string{"default/a", "default/b", "default/a"} {
		q.Add(key) // the second default/a is de-duplicated
	}

	var (
		mu   sync.Mutex
		seen []string
		wg   sync.WaitGroup
	)
	wg.Go(func() { // one worker; a controller runs several
		for {
			key, err := q.Get(context.Background())
			if errors.Is(err, workqueue.ErrShutDown) {
				return
			}
			mu.Lock()
			seen = append(seen, key)
			mu.Unlock()
			q.Forget(key) // success: clear its back-off
			q.Done(key)
		}
	})

	// Stop taking work, and wait until everything queued is processed.
	if err := q.ShutDownWithDrain(context.Background()); err != nil {
		fmt.Println(err)
	}
	wg.Wait()
	fmt.Println(seen)
	// Output: [default/a default/b]
}

func ExampleNewExponential() {
	backoff := workqueue.NewExponential[string](workqueue.ExponentialOptions{
		Base: 10 * time.Millisecond,
		Max:  time.Second,
	})
	var delays []any
	for range 8 {
		delays = append(delays, backoff.When("default/a"))
	}
	fmt.Println(delays...)
	fmt.Println(backoff.NumRequeues("default/a"))
	backoff.Forget("default/a")
	fmt.Println(backoff.When("default/a"))
	// Output:
	// 10ms 20ms 40ms 80ms 160ms 320ms 640ms 1s
	// 8
	// 10ms
}

func ExampleQueue_AddRateLimited() {
	// A fake clock makes back-off visible without waiting.
	fc := clocktesting.NewFakeClock(time.Unix(0, 0))
	q := workqueue.New(workqueue.Options[string]{
		Clock:       fc,
		RateLimiter: workqueue.NewExponential[string](workqueue.ExponentialOptions{Base: time.Second}),
	})
	defer q.ShutDown()

	q.AddRateLimited("default/a") // first failure: retry in 1s
	fmt.Println("waiting:", q.Len())
	fc.Step(time.Second)
	key, _ := q.Get(context.Background()) // blocks until the delay has passed
	fmt.Println("retrying:", key, "requeues:", q.NumRequeues(key))
	q.Forget(key)
	q.Done(key)
	// Output:
	// waiting: 0
	// retrying: default/a requeues: 1
}

// A controller queues its informer's initial list at PriorityLow and real
// changes at PriorityNormal (what NewEnqueue's handler does), so a change
// made while the initial list is still being worked through goes first.
func ExampleQueue_AddWithOptions() {
	q := workqueue.New(workqueue.Options[string]{})
	defer q.ShutDown()
	for _, key := range []string{"default/a", "default/b", "default/c"} {
		q.AddWithOptions(key, workqueue.AddOptions{Priority: workqueue.PriorityLow})
	}
	q.Add("default/new") // a change: PriorityNormal
	q.Add("default/c")   // a change to an object still waiting: raised
	for q.Len() > 0 {
		key, _ := q.Get(context.Background())
		fmt.Print(key, " ")
		q.Done(key)
	}
	fmt.Println()
	// Output: default/new default/c default/a default/b
}

// NewEnqueue's handler is what a controller registers with its informer
// (pods.AddHandler(h, informer.HandlerOptions{})); here the informer's
// calls are made by hand: after a restart, three pods of the initial list
// are queued, then one of them changes and a new pod is created.
func ExampleNewEnqueue() {
	q := workqueue.New(workqueue.Options[string]{Name: "pods"})
	defer q.ShutDown()
	h := workqueue.NewEnqueue(q, workqueue.EnqueueOptions[*corev1.Pod, string]{
		Key: cache.MetaNamespaceKey[*corev1.Pod],
	})
	pod := func(name, rv string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, ResourceVersion: rv}}
	}
	for _, name := range []string{"a", "b", "c"} {
		h.OnAdd(pod(name, "1"), true) // the initial list: PriorityLow
	}
	h.OnUpdate(pod("b", "1"), pod("b", "1")) // a resync: nothing changed, stays low
	h.OnUpdate(pod("c", "1"), pod("c", "7")) // a real change: raised to PriorityNormal
	h.OnAdd(pod("new", "8"), false)          // created now: PriorityNormal
	for q.Len() > 0 {
		key, _ := q.Get(context.Background())
		fmt.Println(key)
		q.Done(key)
	}
	// Output:
	// shop/c
	// shop/new
	// shop/a
	// shop/b
}

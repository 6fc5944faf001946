package cache_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/cache"
)

func pod(ns, name, rv, app string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, ResourceVersion: rv, Labels: map[string]string{"app": app},
	}}
}

func podNames(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Namespace + "/" + p.Name
	}
	slices.Sort(out)
	return out
}

func ExampleNewIndexer() {
	pods := cache.NewIndexer(cache.IndexerOptions[*corev1.Pod]{
		Indexers: cache.Indexers[*corev1.Pod]{
			cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[*corev1.Pod],
			"app": func(p *corev1.Pod) ([]string, error) {
				return []string{p.Labels["app"]}, nil
			},
		},
	})
	_ = pods.Add(pod("default", "web-1", "1", "web"))
	_ = pods.Add(pod("default", "db-1", "2", "db"))
	_ = pods.Add(pod("prod", "web-2", "3", "web"))

	web, _ := pods.ByIndex("app", "web")
	fmt.Println(podNames(web))
	keys, _ := pods.IndexKeys(cache.NamespaceIndex, "default")
	slices.Sort(keys)
	fmt.Println(keys)

	// An object with an empty name is rejected, and nothing changes.
	err := pods.Add(pod("default", "", "4", "web"))
	fmt.Println(errors.Is(err, cache.ErrInvalidObject), len(pods.List()))
	// Output:
	// [default/web-1 prod/web-2]
	// [default/db-1 default/web-1]
	// true 3
}

func ExampleSplitMetaNamespaceKey() {
	ns, name, err := cache.SplitMetaNamespaceKey("kube-system/coredns")
	fmt.Println(ns, name, err)
	_, _, err = cache.SplitMetaNamespaceKey("a/b/c")
	fmt.Println(errors.Is(err, cache.ErrInvalidKey))
	// Output:
	// kube-system coredns <nil>
	// true
}

// A DeltaFIFO between a source and an indexer, as an informer uses it.
func ExampleNewDeltaFIFO() {
	store := cache.NewIndexer(cache.IndexerOptions[*corev1.Pod]{})
	queue := cache.NewDeltaFIFO(cache.DeltaFIFOOptions[*corev1.Pod]{KnownObjects: store})

	_ = queue.Replace([]*corev1.Pod{pod("default", "a", "1", "x"), pod("default", "b", "1", "x")}, "1")
	_ = queue.Update(pod("default", "a", "2", "x"))
	_ = queue.Delete(pod("default", "b", "3", "x"))

	apply := func(_ string, deltas cache.Deltas[*corev1.Pod], isInInitialList bool) error {
		for _, d := range deltas {
			fmt.Printf("%s %s@%s initial=%v\n", d.Type, d.Object.Name, d.Object.ResourceVersion, isInInitialList)
			if d.Type == cache.Deleted {
				_ = store.Delete(d.Object)
			} else {
				_ = store.Update(d.Object)
			}
		}
		return nil
	}
	for queue.Len() > 0 {
		if _, err := queue.Pop(context.Background(), apply); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println("synced:", queue.HasSynced())

	// A relist that no longer has a: its deletion was missed.
	_ = queue.Replace(nil, "5")
	_, _ = queue.Pop(context.Background(), func(_ string, deltas cache.Deltas[*corev1.Pod], _ bool) error {
		d, _ := deltas.Newest()
		fmt.Println(d.Type, d.Object.Name, "state unknown:", d.StateUnknown)
		return nil
	})
	// Output:
	// Replaced a@1 initial=true
	// Updated a@2 initial=true
	// Replaced b@1 initial=true
	// Deleted b@3 initial=true
	// synced: true
	// Deleted a state unknown: true
}

func ExampleNewFIFO() {
	q := cache.NewFIFO(cache.FIFOOptions[*corev1.Pod]{})
	_ = q.Add(pod("default", "a", "1", ""))
	_ = q.Add(pod("default", "b", "1", ""))
	_ = q.Update(pod("default", "a", "2", "")) // replaces a in place
	for q.Len() > 0 {
		p, _ := q.Pop(context.Background(), func(*corev1.Pod, bool) error { return nil })
		fmt.Println(p.Name, p.ResourceVersion)
	}
	// Output:
	// a 2
	// b 1
}

func ExampleNewExpirationStore() {
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := cache.NewExpirationStore(cache.ExpirationStoreOptions[*corev1.Pod]{TTL: time.Minute, Clock: clock})
	_ = s.Add(pod("default", "a", "1", ""))
	_, ok, _ := s.GetByKey("default/a")
	fmt.Println(ok)
	clock.SetTime(clock.Now().Add(2 * time.Minute))
	_, ok, _ = s.GetByKey("default/a")
	fmt.Println(ok)
	// Output:
	// true
	// false
}

func ExampleNewUndeltaStore() {
	s := cache.NewUndeltaStore(cache.UndeltaStoreOptions[*corev1.Pod]{
		Push: func(all []*corev1.Pod) { fmt.Println(podNames(all)) },
	})
	_ = s.Add(pod("default", "a", "1", ""))
	_ = s.Add(pod("default", "b", "1", ""))
	_ = s.Delete(pod("default", "a", "", ""))
	// Output:
	// [default/a]
	// [default/a default/b]
	// [default/b]
}

package controllerruntime

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kinformer/kinformer/integrations/controllerruntime/example/podsummary"
)

// benchPods is how many pods the read benchmarks cache (one namespace).
const benchPods = podsummary.PodsPerNamespace

var populateBench = sync.OnceValue(func() error {
	return podsummary.Populate(context.Background(), env.Clientset(), "readbench", benchPods)
})

// BenchmarkGet and BenchmarkList measure what controller-runtime's default,
// deep-copying reads cost against shared reads (UnsafeDisableDeepCopy), on
// both caches, with realistic pods:
//
//	go test -run - -bench 'Get|List' -benchmem ./integrations/controllerruntime
func BenchmarkGet(b *testing.B) {
	for _, im := range impls {
		for _, shared := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/shared=%v", im.name, shared), func(b *testing.B) {
				c := benchCache(b, im)
				opts := &client.GetOptions{UnsafeDisableDeepCopy: &shared}
				var pod corev1.Pod
				i := 0
				for b.Loop() {
					key := client.ObjectKey{Namespace: "readbench-0", Name: fmt.Sprintf("app-%d-%d", i%benchPods/podsummary.PodsPerApp, i%podsummary.PodsPerApp)}
					if err := c.Get(b.Context(), key, &pod, opts); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

func BenchmarkList(b *testing.B) {
	for _, im := range impls {
		for _, shared := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/shared=%v", im.name, shared), func(b *testing.B) {
				c := benchCache(b, im)
				opts := &client.ListOptions{Namespace: "readbench-0", UnsafeDisableDeepCopy: &shared}
				for b.Loop() {
					var pods corev1.PodList
					if err := c.List(b.Context(), &pods, opts); err != nil {
						b.Fatal(err)
					}
					if len(pods.Items) != benchPods {
						b.Fatalf("%d pods listed", len(pods.Items))
					}
				}
			})
		}
	}
}

// benchCache returns a started, synced cache of im holding the benchmark's
// pods; it stops when the benchmark ends.
func benchCache(b *testing.B, im impl) crcache.Cache {
	b.Helper()
	if err := populateBench(); err != nil {
		b.Fatal(err)
	}
	c, err := im.new(env.RESTConfig(), crcache.Options{DefaultNamespaces: map[string]crcache.Config{"readbench-0": {}}})
	if err != nil {
		b.Fatal(err)
	}
	stop := start(b, c)
	b.Cleanup(stop)
	if _, err := c.GetInformer(b.Context(), &corev1.Pod{}); err != nil {
		b.Fatal(err)
	}
	if !c.WaitForCacheSync(b.Context()) {
		b.Fatal("not synced")
	}
	return c
}

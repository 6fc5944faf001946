package informer

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/metrics"
)

// BenchmarkSharedUpdatesFourHandlers pushes updates over 1,000 objects
// through the informer's queue to four handlers, and waits until every
// handler has seen the last one.
func BenchmarkSharedUpdatesFourHandlers(b *testing.B) {
	const objects, handlers = 1000, 4
	src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range objects {
		src.Create(cm(fmt.Sprintf("o%d", i), 0))
	}
	inf, err := NewShared(Options[*corev1.ConfigMap]{Source: src})
	if err != nil {
		b.Fatal(err)
	}
	last := cm("o0", -1)
	var done [handlers]atomic.Bool
	var seen [handlers]atomic.Int64
	for i := range handlers {
		inf.AddHandler(HandlerFuncs[*corev1.ConfigMap]{UpdateFunc: func(_, obj *corev1.ConfigMap) {
			seen[i].Add(1)
			if obj == last {
				done[i].Store(true)
			}
		}}, HandlerOptions{})
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { inf.Run(ctx); close(ran) }()
	inf.WaitForCacheSync(ctx)
	versions := make([][2]*corev1.ConfigMap, objects)
	for i := range versions {
		name := fmt.Sprintf("o%d", i)
		versions[i] = [2]*corev1.ConfigMap{cm(name, 2*i+1e7), cm(name, 2*i+1e7+1)}
	}
	w := inf.writer
	b.ResetTimer()
	for i := range b.N {
		w.Update(versions[i%objects][(i/objects)%2])
	}
	w.Update(last)
	for i := range handlers {
		for !done[i].Load() {
			runtime.Gosched()
		}
	}
	b.StopTimer()
	var total int64
	for i := range handlers {
		total += seen[i].Load()
	}
	b.ReportMetric(float64(total)/float64(b.N*handlers), "delivered/op")
	cancel()
	<-ran
}

// BenchmarkListenerDelivery measures one notification's trip from the
// informer's side of a listener to its handler.
func BenchmarkListenerDelivery(b *testing.B) {
	var seen atomic.Int64
	h := HandlerFuncs[*corev1.ConfigMap]{UpdateFunc: func(_, _ *corev1.ConfigMap) { seen.Add(1) }}
	l := newTestListener(h, metrics.HandlerMetrics{}.WithDefaults(), 1<<30, nil)
	done := make(chan struct{})
	go func() { l.run(); close(done) }()
	objs := [2]*corev1.ConfigMap{cm("a", 1), cm("a", 2)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		l.add("ns/a", cmNote{kind: updateNotification, old: objs[i%2], obj: objs[(i+1)%2]})
	}
	for seen.Load() < int64(b.N) {
		runtime.Gosched()
	}
	b.StopTimer()
	l.stop()
	<-done
}

package informer

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/metrics"
)

// WaitApplied returns only once the cache writer has applied what was
// queued before it: while nothing pops the queue it waits (until its
// context ends), and once the pop loop runs it returns with every object
// in the cache.
func TestQueueWriterWaitAppliedWaitsForTheCacheWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPipeline(pipelineOptions[*corev1.ConfigMap]{
			name: "waits", report: func(error) {}, clock: clock.RealClock{},
			metrics: metrics.InformerMetrics{}.WithDefaults(),
		})
		items := make([]*corev1.ConfigMap, 50)
		for i := range items {
			items[i] = cm(fmt.Sprintf("o%d", i), i+1)
		}
		if err := p.writer.Replace(items, "50"); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := p.writer.WaitApplied(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitApplied with nothing popping the queue: %v, want the deadline", err)
		}

		ctx, stop := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); p.cache.run(ctx) }()
		if err := p.writer.WaitApplied(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := p.cache.indexer.Len(); n != len(items) {
			t.Fatalf("WaitApplied returned with %d of %d objects in the cache", n, len(items))
		}
		stop()
		p.queue.Close()
		<-done
	})
}

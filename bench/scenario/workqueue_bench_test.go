package scenario

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkWorkqueueSerial measures the cost of one add/get/done cycle on
// one goroutine, so scheduling and lock contention do not blur the queues'
// own work. Each op adds 256 distinct keys, adds them again (de-duplicated),
// then gets and marks done all of them.
func BenchmarkWorkqueueSerial(b *testing.B) {
	keys := make([]string, 256)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/obj-%d", i%100, i)
	}
	ctx := context.Background()
	for _, side := range Sides {
		b.Run(string(side), func(b *testing.B) {
			q := newQueue(side)
			defer q.drain(ctx)
			b.ReportAllocs()
			for b.Loop() {
				for _, k := range keys {
					q.Add(k)
				}
				for _, k := range keys {
					q.Add(k)
				}
				for range keys {
					k, _ := q.get(ctx)
					q.Done(k)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/item")
		})
	}
}

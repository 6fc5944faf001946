package metrics_test

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/metrics"
)

// gauge is a metrics.Gauge that can be read back.
type gauge struct{ bits atomic.Uint64 }

func (g *gauge) Set(v float64)  { g.bits.Store(math.Float64bits(v)) }
func (g *gauge) value() float64 { return math.Float64frombits(g.bits.Load()) }

// modeProvider reports one thing only: which list mode last filled a
// reflector's store. It embeds metrics.Nop for the other sets, and leaves
// every other instrument nil, so not reported.
type modeProvider struct {
	metrics.Nop
	paged, streaming gauge
}

func (p *modeProvider) NewReflectorMetrics(string) metrics.ReflectorMetrics {
	return metrics.ReflectorMetrics{
		PagedLists:     metrics.ListMetrics{Last: &p.paged},
		StreamingLists: metrics.ListMetrics{Last: &p.streaming},
	}
}

// A provider of a few lines, given to an informer: its reflector reports
// that the initial sync came over a streaming list.
func ExampleProvider() {
	src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
	if err != nil {
		panic(err)
	}
	src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
	p := &modeProvider{}
	inf, err := informer.NewShared(informer.Options[*corev1.ConfigMap]{Source: src, Metrics: p})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- inf.Run(ctx) }()
	inf.WaitForCacheSync(ctx)
	cancel()
	<-done
	fmt.Println("streaming:", p.streaming.value(), "paged:", p.paged.value())
	// Output: streaming: 1 paged: 0
}

package prometheus_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	kprom "github.com/kinformer/kinformer/metrics/prometheus"
	"github.com/kinformer/kinformer/workqueue"
)

func TestProviderReportsWorkqueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		p, err := kprom.NewProvider(kprom.Options{Registerer: reg})
		if err != nil {
			t.Fatal(err)
		}
		q := workqueue.New(workqueue.Options[string]{Name: "pods", Metrics: p})
		defer q.ShutDown()
		q.Add("a")
		q.Add("b")
		q.Add("b")
		q.AddWithOptions("l", workqueue.AddOptions{Priority: workqueue.PriorityLow})
		if _, err := q.Get(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		q.AddRateLimited("c")

		got := series(t, reg)
		const (
			pods   = `{name="pods"}`
			normal = `{name="pods",priority="0"}`
			low    = `{name="pods",priority="-100"}`
		)
		want := map[string]float64{
			"workqueue_depth" + normal:                           1,
			"workqueue_depth" + low:                              1,
			"workqueue_adds_total" + pods:                        3,
			"workqueue_queue_duration_seconds" + normal:          1, // one observation
			"workqueue_queue_duration_seconds" + low:             0,
			"workqueue_work_duration_seconds" + pods:             0,
			"workqueue_retries_total" + pods:                     1,
			"workqueue_unfinished_work_seconds" + pods:           2,
			"workqueue_longest_running_processor_seconds" + pods: 2,
			"workqueue_oldest_waiting_seconds" + normal:          2,
			"workqueue_oldest_waiting_seconds" + low:             2,
		}
		for id, w := range want {
			if g, ok := got[id]; !ok || g != w {
				t.Errorf("%s = %v (present %v), want %v", id, g, ok, w)
			}
		}
		q.Done("a")
		q.Len() // a Done is recorded once the queue applies it
		if got := series(t, reg); got["workqueue_work_duration_seconds"+pods] != 1 || got["workqueue_unfinished_work_seconds"+pods] != 0 {
			t.Errorf("after Done: %v", got)
		}
	})
}

func ExampleProvider_workqueue() {
	reg := prometheus.NewRegistry()
	p, err := kprom.NewProvider(kprom.Options{Registerer: reg, Namespace: "myctl"})
	if err != nil {
		panic(err)
	}
	q := workqueue.New(workqueue.Options[string]{Name: "pods", Metrics: p})
	defer q.ShutDown()
	q.Add("default/a")
	key, _ := q.Get(context.Background())
	q.Done(key)

	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == "myctl_workqueue_adds_total" {
			fmt.Println(f.GetName(), f.GetMetric()[0].GetCounter().GetValue())
		}
	}
	// Output: myctl_workqueue_adds_total 1
}

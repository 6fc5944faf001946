package prometheus_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	kprom "github.com/kinformer/kinformer/metrics/prometheus"
	"github.com/kinformer/kinformer/workqueue"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// gather returns, for each metric family, the value of the series labelled
// name=queue (a histogram reports its sample count).
func gather(t *testing.T, reg *prometheus.Registry, queue string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]float64)
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if !hasLabel(m, "name", queue) {
				continue
			}
			switch {
			case m.Gauge != nil:
				out[f.GetName()] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[f.GetName()] = m.GetCounter().GetValue()
			case m.Histogram != nil:
				out[f.GetName()] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

func TestWorkqueueProviderReportsQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		p, err := kprom.NewWorkqueueProvider(kprom.WorkqueueOptions{Registerer: reg})
		if err != nil {
			t.Fatal(err)
		}
		q := workqueue.New(workqueue.Options[string]{Name: "pods", Metrics: p})
		defer q.ShutDown()
		q.Add("a")
		q.Add("b")
		q.Add("b")
		if _, err := q.Get(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		q.AddRateLimited("c")

		got := gather(t, reg, "pods")
		want := map[string]float64{
			"workqueue_depth":                             1,
			"workqueue_adds_total":                        2,
			"workqueue_queue_duration_seconds":            1, // one observation
			"workqueue_work_duration_seconds":             0,
			"workqueue_retries_total":                     1,
			"workqueue_unfinished_work_seconds":           2,
			"workqueue_longest_running_processor_seconds": 2,
		}
		for name, w := range want {
			if g, ok := got[name]; !ok || g != w {
				t.Errorf("%s = %v (present %v), want %v", name, g, ok, w)
			}
		}
		q.Done("a")
		if got := gather(t, reg, "pods"); got["workqueue_work_duration_seconds"] != 1 || got["workqueue_unfinished_work_seconds"] != 0 {
			t.Errorf("after Done: %v", got)
		}
	})
}

func TestNewWorkqueueProviderTwiceOnOneRegistryFails(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := kprom.NewWorkqueueProvider(kprom.WorkqueueOptions{Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	_, err := kprom.NewWorkqueueProvider(kprom.WorkqueueOptions{Registerer: reg})
	var already prometheus.AlreadyRegisteredError
	if !errors.As(err, &already) {
		t.Fatalf("second registration: %v, want AlreadyRegisteredError", err)
	}
	if _, err := kprom.NewWorkqueueProvider(kprom.WorkqueueOptions{Registerer: reg, Namespace: "other"}); err != nil {
		t.Fatalf("another namespace: %v", err)
	}
}

func ExampleNewWorkqueueProvider() {
	reg := prometheus.NewRegistry()
	p, err := kprom.NewWorkqueueProvider(kprom.WorkqueueOptions{Registerer: reg, Namespace: "myctl"})
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

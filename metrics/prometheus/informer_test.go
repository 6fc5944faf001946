package prometheus_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch/fake"
	kprom "github.com/kinformer/kinformer/metrics/prometheus"
)

// informerSeries returns, for each metric family, the value of the series
// whose labels include every pair of want (a histogram reports its sample
// count).
func informerSeries(t *testing.T, reg *prometheus.Registry, want map[string]string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]float64)
	for _, f := range families {
	metric:
		for _, m := range f.GetMetric() {
			for k, v := range want {
				found := false
				for _, l := range m.GetLabel() {
					found = found || l.GetName() == k && l.GetValue() == v
				}
				if !found {
					continue metric
				}
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

func TestInformerProviderReportsInformerAndHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		p, err := kprom.NewInformerProvider(kprom.InformerOptions{Registerer: reg, Namespace: "kinformer"})
		if err != nil {
			t.Fatal(err)
		}
		var already prometheus.AlreadyRegisteredError
		if _, err := kprom.NewInformerProvider(kprom.InformerOptions{Registerer: reg, Namespace: "kinformer"}); !errors.As(err, &already) {
			t.Errorf("registering twice: %v, want an AlreadyRegisteredError", err)
		}
		src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "b", "boom"} {
			src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}})
		}
		inf, err := informer.NewShared(informer.SharedOptions[*corev1.ConfigMap]{
			Name: "cms", Source: src, Metrics: p, ErrorHandler: func(error) {},
		})
		if err != nil {
			t.Fatal(err)
		}
		inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(cm *corev1.ConfigMap, _ bool) {
			if cm.Name == "boom" {
				panic("boom")
			}
		}}, informer.HandlerOptions{Name: "h"})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- inf.Run(ctx) }()
		synctest.Wait()
		src.Delete("ns", "a")
		synctest.Wait()

		got := informerSeries(t, reg, map[string]string{"name": "cms"})
		for metric, check := range map[string]func(float64) bool{
			"kinformer_informer_lists_total":              func(v float64) bool { return true }, // a streaming list is a watch
			"kinformer_informer_watches_total":            func(v float64) bool { return v >= 1 },
			"kinformer_informer_last_resource_version":    func(v float64) bool { return v == 5 },
			"kinformer_informer_queue_depth":              func(v float64) bool { return v == 0 },
			"kinformer_informer_handler_panics_total":     func(v float64) bool { return v == 1 },
			"kinformer_informer_handler_duration_seconds": func(v float64) bool { return v == 4 },
			"kinformer_informer_handler_backlog":          func(v float64) bool { return v == 0 },
		} {
			if v, ok := got[metric]; !ok || !check(v) {
				t.Errorf("%s = %v (reported %v)", metric, v, ok)
			}
		}
		deleted := informerSeries(t, reg, map[string]string{"name": "cms", "type": "DELETED"})
		if deleted["kinformer_informer_events_total"] != 1 {
			t.Errorf("DELETED events = %v, want 1", deleted["kinformer_informer_events_total"])
		}
		cancel()
		<-done
	})
}

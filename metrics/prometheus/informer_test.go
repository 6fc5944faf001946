package prometheus_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch/fake"
	kprom "github.com/kinformer/kinformer/metrics/prometheus"
	"github.com/kinformer/kinformer/reflector"
)

// TestProviderReportsSharedInformerOnce runs a shared informer, in each
// list mode, with a handler that panics once, and reads its series: the
// lists of the mode used (and only those), the watch, the events, the
// informer's queue and cache, the handler's calls.
func TestProviderReportsSharedInformerOnce(t *testing.T) {
	for _, tc := range []struct {
		mode          string
		streaming     reflector.StreamingMode
		other         string
		pagedLists    float64
		streamingList float64
	}{
		{"paged", reflector.StreamingOff, "streaming", 1, 0},
		{"streaming", reflector.StreamingAuto, "paged", 0, 1},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reg := prometheus.NewRegistry()
				p, err := kprom.NewProvider(kprom.Options{Registerer: reg, Namespace: "kinformer"})
				if err != nil {
					t.Fatal(err)
				}
				src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
				if err != nil {
					t.Fatal(err)
				}
				for _, name := range []string{"a", "b", "boom"} {
					src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}})
				}
				inf, err := informer.NewShared(informer.Options[*corev1.ConfigMap]{
					Name: "cms", Source: src, Metrics: p, ErrorHandler: func(error) {},
					Settings: reflector.Settings{Streaming: tc.streaming},
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

				got := series(t, reg)
				cancel()
				<-done
				const (
					cms  = `name="cms"`
					hcms = `handler="h",name="cms"`
				)
				for id, want := range map[string]float64{
					`kinformer_reflector_lists_total{mode="paged",` + cms + `}`:                     tc.pagedLists,
					`kinformer_reflector_lists_total{mode="streaming",` + cms + `}`:                 tc.streamingList,
					`kinformer_reflector_list_items{mode="` + tc.mode + `",` + cms + `}`:            1,
					`kinformer_reflector_list_duration_seconds{mode="` + tc.mode + `",` + cms + `}`: 1,
					`kinformer_reflector_last_list_mode{mode="` + tc.mode + `",` + cms + `}`:        1,
					`kinformer_reflector_last_list_mode{mode="` + tc.other + `",` + cms + `}`:       0,
					`kinformer_reflector_list_errors_total{mode="` + tc.mode + `",` + cms + `}`:     0,
					`kinformer_reflector_watches_total{` + cms + `}`:                                1,
					`kinformer_reflector_events_total{` + cms + `,type="DELETED"}`:                  1,
					`kinformer_reflector_events_total{` + cms + `,type="ADDED"}`:                    0,
					`kinformer_reflector_last_resource_version{` + cms + `}`:                        5,
					`kinformer_informer_queue_depth{` + cms + `}`:                                   0,
					`kinformer_informer_objects{` + cms + `}`:                                       2,
					`kinformer_informer_handler_panics_total{` + hcms + `}`:                         1,
					`kinformer_informer_handler_duration_seconds{` + hcms + `}`:                     4,
					`kinformer_informer_handler_backlog{` + hcms + `}`:                              0,
				} {
					if v, ok := got[id]; !ok || v != want {
						t.Errorf("%s = %v (present %v), want %v", id, v, ok, want)
					}
				}
				// Lists and watches are the reflector's alone.
				for id := range got {
					if strings.HasPrefix(id, "kinformer_informer_list") || strings.HasPrefix(id, "kinformer_informer_watch") {
						t.Errorf("reported twice: %s", id)
					}
				}
			})
		})
	}
}

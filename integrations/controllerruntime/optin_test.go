package controllerruntime

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// gauge returns the value of the series of metric name whose "name" label
// is informer, and whether there is one.
func metricValue(t *testing.T, reg *prometheus.Registry, name, informer string) (float64, bool) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelOf(m, "name") != informer {
				continue
			}
			switch {
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			}
		}
	}
	return 0, false
}

func labelOf(m *dto.Metric, label string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == label {
			return l.GetValue()
		}
	}
	return ""
}

const viewInformerName = "/v1, Kind=testPodView"

// The sync progress of every informer, on the registerer given: synced,
// objects listed, stalls; and kinformer's own informer metrics beside.
func TestMetricsOnManagerRegistry(t *testing.T) {
	ns := newNamespace(t)
	for i := range 3 {
		createPod(t, ns, fmt.Sprintf("p%d", i), "n", nil)
	}
	reg := prometheus.NewRegistry()
	mgr := newTestManager(t, viewScheme(t), manager.Options{
		NewCache: NewCache(Options{Metrics: reg}),
		Cache:    crcache.Options{DefaultNamespaces: map[string]crcache.Config{ns: {}}},
	})
	if _, err := mgr.GetCache().GetInformer(t.Context(), &testPodView{}); err != nil {
		t.Fatal(err)
	}
	if v, ok := metricValue(t, reg, "kinformer_cache_synced", viewInformerName); !ok || v != 0 {
		t.Fatalf("before Start: kinformer_cache_synced = %v (present %v), want 0", v, ok)
	}
	stop := startManager(t, mgr)
	defer stop()
	if !mgr.GetCache().WaitForCacheSync(t.Context()) {
		t.Fatal("cache did not sync")
	}
	for name, want := range map[string]float64{
		"kinformer_cache_synced":                1,
		"kinformer_cache_listing":               0,
		"kinformer_cache_sync_listed_objects":   3,
		"kinformer_cache_stalled_watches_total": 0,
		"kinformer_informer_objects":            3,
	} {
		if v, ok := metricValue(t, reg, name, viewInformerName); !ok || v != want {
			t.Errorf("%s{name=%q} = %v (present %v), want %v", name, viewInformerName, v, ok, want)
		}
	}
	// A second manager on the same registerer shares the collectors.
	if _, err := NewCache(Options{Metrics: reg})(env.RESTConfig(), crcache.Options{Scheme: viewScheme(t)}); err != nil {
		t.Fatalf("a second cache on the same registerer: %v", err)
	}
}

// A manager restarted on a checkpoint directory starts its informers from
// their checkpoints, which the server confirms, and catches up with the
// changes made while it was down.
func TestCheckpointWarmRestart(t *testing.T) {
	ns := newNamespace(t)
	for i := range 20 {
		createPod(t, ns, fmt.Sprintf("p%d", i), "n", nil)
	}
	dir := t.TempDir()
	run := func(reg *prometheus.Registry, want func([]string) bool) (names []string) {
		mgr := newTestManager(t, viewScheme(t), manager.Options{
			NewCache: NewCache(Options{Metrics: reg, Checkpoints: Checkpoints{Dir: dir, Interval: 50 * time.Millisecond, Changes: 1}}),
			Cache:    crcache.Options{DefaultNamespaces: map[string]crcache.Config{ns: {}}},
		})
		if _, err := mgr.GetCache().GetInformer(t.Context(), &testPodView{}); err != nil {
			t.Fatal(err)
		}
		stop := startManager(t, mgr)
		var once sync.Once
		defer once.Do(stop)
		if !mgr.GetCache().WaitForCacheSync(t.Context()) {
			t.Fatal("cache did not sync")
		}
		// Synced from a checkpoint, the cache is at the checkpoint's
		// version, confirmed by the server; the watch from there brings the
		// changes made since.
		eventually(t, "the views of every pod", func() bool {
			var list ViewList[*testPodView]
			if err := mgr.GetClient().List(t.Context(), &list, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			names = names[:0]
			for _, v := range list.Items {
				names = append(names, v.Name)
			}
			return want(names)
		})
		eventually(t, "a checkpoint written", func() bool {
			v, _ := metricValue(t, reg, "kinformer_informer_checkpoint_writes_total", viewInformerName)
			return v > 0
		})
		once.Do(stop)
		return names
	}
	first := prometheus.NewRegistry()
	run(first, func(names []string) bool { return len(names) == 20 })
	if v, _ := metricValue(t, first, "kinformer_informer_checkpoint_loads_total", viewInformerName); v != 0 {
		t.Fatalf("first run loaded %v checkpoints from an empty directory", v)
	}
	files, err := os.ReadDir(dir)
	if err != nil || len(files) != 1 {
		t.Fatalf("checkpoint directory: %v files (%v), want 1", len(files), err)
	}

	// While the manager is down: one pod more, one less.
	createPod(t, ns, "late", "n", nil)
	if err := clientset().CoreV1().Pods(ns).Delete(t.Context(), "p0", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}

	second := prometheus.NewRegistry()
	run(second, func(names []string) bool {
		joined := "," + strings.Join(names, ",") + ","
		return len(names) == 20 && strings.Contains(joined, ",late,") && !strings.Contains(joined, ",p0,")
	})
	if v, _ := metricValue(t, second, "kinformer_informer_checkpoint_loads_total", viewInformerName); v != 1 {
		t.Fatalf("second run: %v checkpoints loaded, want 1", v)
	}
}

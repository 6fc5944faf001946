package prometheus_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/metrics"
	kprom "github.com/kinformer/kinformer/metrics/prometheus"
)

// instruments returns every instrument field of the struct v, nested
// structs included, by path.
func instruments(v reflect.Value, prefix string, out map[string]reflect.Value) {
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		switch f.Kind() {
		case reflect.Struct:
			instruments(f, prefix+sf.Name+".", out)
		case reflect.Interface:
			out[prefix+sf.Name] = f
		case reflect.Func: // instruments by label, such as CheckpointMetrics.Refused or WorkqueueMetrics.Priority
			if f.IsNil() || f.Type().NumIn() != 1 || f.Type().NumOut() != 1 {
				continue
			}
			var got reflect.Value
			switch f.Type().In(0).Kind() {
			case reflect.String:
				got = f.Call([]reflect.Value{reflect.ValueOf("corrupt")})[0]
			case reflect.Int:
				got = f.Call([]reflect.Value{reflect.ValueOf(-100)})[0]
			default:
				continue
			}
			if got.Kind() == reflect.Struct {
				instruments(got, prefix+sf.Name+".", out)
			} else {
				out[prefix+sf.Name] = got
			}
		}
	}
}

// vocabulary is every metric the provider exports (namespace "k"). The
// metrics package documents the same list.
var vocabulary = []string{
	"k_reflector_lists_total", "k_reflector_list_errors_total", "k_reflector_list_duration_seconds",
	"k_reflector_list_items", "k_reflector_last_list_mode", "k_reflector_watches_total",
	"k_reflector_watch_errors_total", "k_reflector_watch_duration_seconds", "k_reflector_short_watches_total",
	"k_reflector_stalled_watches_total",
	"k_reflector_events_total", "k_reflector_skipped_total", "k_reflector_backoff_seconds",
	"k_reflector_last_resource_version", "k_reflector_failures_total", "k_reflector_failing",
	"k_informer_queue_depth", "k_informer_objects", "k_informer_lag_seconds",
	"k_informer_handler_backlog", "k_informer_handler_merged_total", "k_informer_handler_duration_seconds",
	"k_informer_handler_panics_total",
	"k_informer_checkpoint_loads_total", "k_informer_checkpoint_loaded_objects", "k_informer_checkpoint_loaded_age_seconds",
	"k_informer_checkpoint_refused_total", "k_informer_checkpoint_writes_total", "k_informer_checkpoint_write_errors_total",
	"k_informer_checkpoint_bytes", "k_informer_checkpoint_write_duration_seconds",
	"k_workqueue_depth", "k_workqueue_adds_total", "k_workqueue_queue_duration_seconds",
	"k_workqueue_work_duration_seconds", "k_workqueue_retries_total",
	"k_workqueue_unfinished_work_seconds", "k_workqueue_longest_running_processor_seconds",
	"k_workqueue_oldest_waiting_seconds",
	"k_shard_server_side", "k_shard_dropped_total", "k_shard_members", "k_shard_ranges_owned",
	"k_shard_objects_owned", "k_shard_handoffs_total", "k_shard_convergence_seconds",
}

// TestProviderImplementsEveryInstrument asks the provider for every set of
// instruments and updates each instrument in turn, found by reflection:
// each must be set, and must move exactly one series of its own, so that
// an instrument added to the metrics package without a Prometheus series
// fails here. Together they must cover the whole vocabulary.
func TestProviderImplementsEveryInstrument(t *testing.T) {
	reg := prometheus.NewRegistry()
	p, err := kprom.NewProvider(kprom.Options{Registerer: reg, Namespace: "k"})
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]any{
		"ReflectorMetrics": p.NewReflectorMetrics("r"),
		"InformerMetrics":  p.NewInformerMetrics("i"),
		"HandlerMetrics":   p.NewHandlerMetrics("i", "h"),
		"WorkqueueMetrics": p.NewWorkqueueMetrics("q", func() metrics.WorkqueueSample {
			return metrics.WorkqueueSample{Unfinished: 3, Longest: 2, Priorities: []metrics.PrioritySample{{Priority: 0, Depth: 4, Oldest: 1}}}
		}),
		"ShardMetrics":   p.NewShardMetrics("s"),
		"ReplicaMetrics": p.NewReplicaMetrics("g"),
	}
	moved := map[string]string{} // series → the instrument that moved it
	seen := map[string]bool{}    // metric names
	before := series(t, reg)
	for id := range before {
		seen[family(id)] = true // sampled at scrape time: the in-flight gauges
	}
	for set, m := range sets {
		fields := map[string]reflect.Value{}
		instruments(reflect.ValueOf(m), "", fields)
		before = series(t, reg) // an instrument by label makes its series when asked for
		for _, path := range slices.Sorted(maps.Keys(fields)) {
			name := set + "." + path
			f := fields[path]
			if f.IsNil() {
				t.Errorf("%s is not implemented (nil)", name)
				continue
			}
			switch i := f.Interface().(type) {
			case metrics.Counter:
				i.Inc()
			case metrics.Gauge:
				i.Set(42)
			case metrics.Histogram:
				i.Observe(0.5)
			default:
				t.Fatalf("%s: %T is no instrument", name, i)
			}
			after := series(t, reg)
			var changed []string
			for id, v := range after {
				if old, ok := before[id]; !ok || old != v {
					changed = append(changed, id)
				}
			}
			before = after
			if len(changed) != 1 {
				t.Errorf("%s moved %d series, want 1: %v", name, len(changed), changed)
				continue
			}
			if other, ok := moved[changed[0]]; ok {
				t.Errorf("%s and %s share the series %s", other, name, changed[0])
			}
			moved[changed[0]] = name
			seen[family(changed[0])] = true
		}
	}
	for _, name := range vocabulary {
		if !seen[name] {
			t.Errorf("%s: no instrument reports it", name)
		}
		delete(seen, name)
	}
	for name := range seen {
		t.Errorf("%s: reported but not in the vocabulary", name)
	}
}

// TestVocabularyIsDocumented checks that the metrics package's
// documentation lists every metric the provider exports.
func TestVocabularyIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range vocabulary {
		if !strings.Contains(string(doc), " "+strings.TrimPrefix(name, "k_")+" ") {
			t.Errorf("%s is not in the metrics package's documentation", name)
		}
	}
}

func TestNewProviderTwiceOnOneRegistryFails(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := kprom.NewProvider(kprom.Options{Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	_, err := kprom.NewProvider(kprom.Options{Registerer: reg})
	var already prometheus.AlreadyRegisteredError
	if !errors.As(err, &already) {
		t.Fatalf("second registration: %v, want AlreadyRegisteredError", err)
	}
	if _, err := kprom.NewProvider(kprom.Options{Registerer: reg, Namespace: "other"}); err != nil {
		t.Fatalf("another namespace: %v", err)
	}
}

// TestNewProviderThatFailsLeavesNothingRegistered makes the last
// collector's registration fail: the ones before it are taken back, so
// the registry can take a provider once the conflict is gone.
func TestNewProviderThatFailsLeavesNothingRegistered(t *testing.T) {
	reg := prometheus.NewRegistry()
	// Same name, help and labels: a registry keeps a name's label names
	// for good, even once its collector is unregistered.
	conflict := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "workqueue_unfinished_work_seconds",
		Help: "Sum of the running times, in seconds, of the items workers hold now.",
	}, []string{"name"})
	reg.MustRegister(conflict)
	if _, err := kprom.NewProvider(kprom.Options{Registerer: reg}); err == nil {
		t.Fatal("registered over a conflicting collector")
	}
	reg.Unregister(conflict)
	if _, err := kprom.NewProvider(kprom.Options{Registerer: reg}); err != nil {
		t.Fatalf("after the conflict is gone: %v", err)
	}
}

func ExampleNewProvider() {
	reg := prometheus.NewRegistry()
	p, err := kprom.NewProvider(kprom.Options{Registerer: reg, Namespace: "myctl"})
	if err != nil {
		panic(err)
	}
	// Pass p as the Metrics option of a factory, an informer, a
	// controller or a work queue; here a reflector's instruments are used
	// directly.
	m := p.NewReflectorMetrics("pods")
	m.StreamingLists.Attempts.Inc()
	m.StreamingLists.Last.Set(1)

	families, _ := reg.Gather()
	for _, f := range families {
		for _, s := range f.GetMetric() {
			if v := s.GetCounter().GetValue() + s.GetGauge().GetValue(); v != 0 {
				fmt.Print(f.GetName())
				for _, l := range s.GetLabel() {
					fmt.Printf(" %s=%s", l.GetName(), l.GetValue())
				}
				fmt.Println(":", v)
			}
		}
	}
	// Output:
	// myctl_reflector_last_list_mode mode=streaming name=pods: 1
	// myctl_reflector_lists_total mode=streaming name=pods: 1
}

package sharding_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/testenv"
)

// modeRec is a metrics.ShardProvider that keeps each source's last
// ServerSide value.
type modeRec struct {
	mu   sync.Mutex
	mode map[string]float64
}

type modeGauge struct {
	r    *modeRec
	name string
}

func (g modeGauge) Set(v float64) { g.r.mu.Lock(); g.r.mode[g.name] = v; g.r.mu.Unlock() }

func (r *modeRec) NewShardMetrics(name string) metrics.ShardMetrics {
	return metrics.ShardMetrics{ServerSide: modeGauge{r, name}}
}
func (r *modeRec) NewReplicaMetrics(string) metrics.ReplicaMetrics { return metrics.ReplicaMetrics{} }

func (r *modeRec) values() []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []float64
	for _, v := range r.mode {
		out = append(out, v)
	}
	return out
}

// Three informers, one per third of the uid space, cache between them
// every object of the namespace exactly once, through creations and
// deletions, whether the server filters (gate on) or they do (gate off);
// each reports which.
func TestShardedInformersPartitionTheResource(t *testing.T) {
	for _, gateOn := range []bool{true, false} {
		t.Run(fmt.Sprintf("gate %v", gateOn), func(t *testing.T) {
			env := envWithGate(t, gateOn)
			ns := fmt.Sprintf("thirds-%v", gateOn)
			if err := env.CreateNamespace(t.Context(), ns); err != nil {
				t.Fatal(err)
			}
			if err := env.CreateConfigMaps(t.Context(), ns, 300, testenv.BulkOptions{}); err != nil {
				t.Fatal(err)
			}
			modes := &modeRec{mode: map[string]float64{}}
			f, err := kube.NewFactory(env.RESTConfig(), kube.FactoryOptions{Namespace: ns, ShardMetrics: modes})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Shutdown()
			var sets []shard.Set
			var infs []*informer.Shared[*corev1.ConfigMap]
			for _, r := range shard.Split(3) {
				set, err := shard.NewSet(shard.UID, r)
				if err != nil {
					t.Fatal(err)
				}
				inf, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[*corev1.ConfigMap]{Selection: kube.Selection{Shard: set}})
				if err != nil {
					t.Fatal(err)
				}
				sets, infs = append(sets, set), append(infs, inf)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			f.Start(ctx)
			for key, ok := range f.WaitForCacheSync(ctx) {
				if !ok {
					t.Fatalf("%s did not sync", key)
				}
			}
			cms := env.Clientset().CoreV1().ConfigMaps(ns)
			if err := env.CreateConfigMaps(t.Context(), ns, 60, testenv.BulkOptions{NamePrefix: "late-"}); err != nil {
				t.Fatal(err)
			}
			for i := range 40 {
				if err := cms.Delete(t.Context(), fmt.Sprintf("cm-%d", i*7), metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			eventually(t, "the thirds partition a fresh list", func() (bool, string) {
				list, err := cms.List(t.Context(), metav1.ListOptions{})
				if err != nil {
					return false, err.Error()
				}
				want := map[string]string{}
				for i := range list.Items {
					want[list.Items[i].Name] = list.Items[i].ResourceVersion
				}
				got := map[string]string{}
				for i, inf := range infs {
					for _, o := range inf.Cache().List() {
						if !sets[i].Contains(o) {
							return false, fmt.Sprintf("%s cached by the informer of %s", o.Name, sets[i])
						}
						if _, dup := got[o.Name]; dup {
							return false, fmt.Sprintf("%s cached twice", o.Name)
						}
						got[o.Name] = o.ResourceVersion
					}
				}
				if len(got) != len(want) {
					return false, fmt.Sprintf("cached %d, listed %d", len(got), len(want))
				}
				for k, rv := range want {
					if got[k] != rv {
						return false, fmt.Sprintf("%s: cached at %q, listed at %q", k, got[k], rv)
					}
				}
				return true, ""
			})
			want := 0.0
			if gateOn {
				want = 1
			}
			if got := modes.values(); len(got) != 3 || slices.ContainsFunc(got, func(v float64) bool { return v != want }) {
				t.Errorf("ServerSide of the three sources: %v, want %v each", got, want)
			}
		})
	}
}

// eventually polls cond until it reports true, failing the test with
// cond's last explanation after a minute. Polling a real server is the
// one place these tests wait on the clock; no test asserts a duration.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, why := cond()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not reached within a minute: %s", what, why)
		case <-tick.C:
		}
	}
}

package cli

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/metrics"
)

func TestCollectorKeepsCountsAndForwards(t *testing.T) {
	next := &recordingProvider{}
	c := newCollector(next)
	r := c.NewReflectorMetrics("pods")
	r.AddedEvents.Inc()
	r.AddedEvents.Inc()
	r.PagedLists.Attempts.Inc()
	r.StreamingLists.Errors.Inc()
	r.LastResourceVersion.Set(42)
	c.NewInformerMetrics("pods").Objects.Set(7)
	h := c.NewHandlerMetrics("pods", "h")
	h.Backlog.Set(3)
	h.Merged.Inc()
	got := c.counters("pods")
	if got.added.value() != 2 || got.lists.value() != 1 || got.listErrors.value() != 1 || got.lastRV.value() != 42 ||
		got.objects.value() != 7 || got.backlog.value() != 3 || got.merged.value() != 1 {
		t.Errorf("kept added %d lists %d errors %d rv %v objects %v backlog %v merged %d", got.added.value(), got.lists.value(),
			got.listErrors.value(), got.lastRV.value(), got.objects.value(), got.backlog.value(), got.merged.value())
	}
	if next.incs != 5 || next.sets != 3 {
		t.Errorf("forwarded %d incs and %d sets, want 5 and 3", next.incs, next.sets)
	}
	if newCollector(nil).NewHandlerMetrics("x", "y").Latency != nil {
		t.Error("latency measured without a Prometheus provider")
	}
}

func TestCollectorTellsHealthOfListsWatchesAndBackoff(t *testing.T) {
	clock := newFakeClock("10:00:00")
	c := newCollector(nil)
	c.health = newHealth(testHost, nil, clock.now)
	r := c.NewReflectorMetrics("pods")
	c.health.failure("pods", refused("pods"))
	r.Backoff.Observe(6)
	if got := c.health.takeNotes(); len(got) != 1 || !strings.HasSuffix(got[0], "next try in 6s") {
		t.Errorf("after a back-off: %q", got)
	}
	clock.advance(10 * time.Second)
	r.Watches.Inc()
	c.health.failure("pods", gone("pods"))
	r.PagedLists.Items.Observe(12)
	got := c.health.takeNotes()
	if len(got) != 3 || !strings.Contains(got[0], "reconnected") || !strings.Contains(got[2], "cache resynced, 12 objects") {
		t.Errorf("after a watch and a list: %q", got)
	}
	if c.counters("pods").backoffs.value() != 1 || c.counters("pods").watches.value() != 1 {
		t.Error("back-off or watch not counted")
	}
}

// recordingProvider counts every Inc and Set it receives.
type recordingProvider struct {
	mu         sync.Mutex
	incs, sets int
}

func (r *recordingProvider) Inc()            { r.mu.Lock(); r.incs++; r.mu.Unlock() }
func (r *recordingProvider) Set(float64)     { r.mu.Lock(); r.sets++; r.mu.Unlock() }
func (r *recordingProvider) Observe(float64) {}
func (r *recordingProvider) NewReflectorMetrics(string) metrics.ReflectorMetrics {
	return metrics.ReflectorMetrics{AddedEvents: r, LastResourceVersion: r,
		PagedLists: metrics.ListMetrics{Attempts: r}, StreamingLists: metrics.ListMetrics{Errors: r}}
}
func (r *recordingProvider) NewInformerMetrics(string) metrics.InformerMetrics {
	return metrics.InformerMetrics{Objects: r}
}
func (r *recordingProvider) NewHandlerMetrics(string, string) metrics.HandlerMetrics {
	return metrics.HandlerMetrics{Backlog: r, Merged: r}
}
func (r *recordingProvider) NewShardMetrics(string) metrics.ShardMetrics {
	return metrics.ShardMetrics{ServerSide: r, Dropped: r}
}
func (r *recordingProvider) NewReplicaMetrics(string) metrics.ReplicaMetrics {
	return metrics.ReplicaMetrics{}
}

func TestCollectorReportsTheShardMode(t *testing.T) {
	next := &recordingProvider{}
	c := newCollector(next)
	if c.counters("pods").shard != nil {
		t.Fatal("an informer without a shard filter counts as sharded")
	}
	m := c.shardMetrics("pods")
	sc := c.counters("pods").shard
	if sc == nil || sc.mode() != "probing" {
		t.Fatalf("before the first list: %+v, want mode probing", sc)
	}
	m.ServerSide.Set(1)
	if sc.mode() != "server" {
		t.Errorf("after ServerSide=1: mode %s, want server", sc.mode())
	}
	m.ServerSide.Set(0)
	m.Dropped.Inc()
	m.Dropped.Inc()
	if sc.mode() != "client" || sc.dropped.value() != 2 {
		t.Errorf("after ServerSide=0 and 2 drops: mode %s, dropped %d", sc.mode(), sc.dropped.value())
	}
	if next.sets != 2 || next.incs != 2 {
		t.Errorf("forwarded %d sets and %d incs, want 2 and 2", next.sets, next.incs)
	}
}

func TestMetricsServerListensOnLoopbackAndStops(t *testing.T) {
	if got, _ := metricsListenAddr(":9090"); got != "127.0.0.1:9090" {
		t.Errorf("bare port listens on %q", got)
	}
	if got, _ := metricsListenAddr("0.0.0.0:9090"); got != "0.0.0.0:9090" {
		t.Errorf("explicit host changed to %q", got)
	}
	if _, err := metricsListenAddr("9090"); err == nil {
		t.Error("an address without a port accepted")
	}
	var errOut bytes.Buffer
	provider, stop, err := serveMetrics(":0", &errOut)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	provider.NewReflectorMetrics("pods").WithDefaults().AddedEvents.Inc()
	line := errOut.String()
	start := strings.Index(line, "http://") + len("http://")
	addr := line[start : start+strings.Index(line[start:], "/")]
	if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
		t.Errorf("listening on %s", addr)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+addr+"/metrics", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if !strings.Contains(body.String(), `kinformer_reflector_events_total{name="pods",type="ADDED"} 1`) {
		t.Errorf("/metrics lacks the reflector's count:\n%s", body.String())
	}
}

// passthrough is a metrics.Provider whose lag and stalled-watch
// instruments record their last value.
type passthrough struct{ lag, stalled float64 }

type setter func(float64)

func (s setter) Set(v float64)     { s(v) }
func (s setter) Inc()              { s(1) }
func (s setter) Observe(v float64) { s(v) }

func (p *passthrough) NewReflectorMetrics(string) metrics.ReflectorMetrics {
	return metrics.ReflectorMetrics{StalledWatches: setter(func(v float64) { p.stalled += v })}
}
func (p *passthrough) NewInformerMetrics(string) metrics.InformerMetrics {
	return metrics.InformerMetrics{Lag: setter(func(v float64) { p.lag = v })}
}
func (p *passthrough) NewHandlerMetrics(string, string) metrics.HandlerMetrics {
	return metrics.HandlerMetrics{}
}
func (p *passthrough) NewShardMetrics(string) metrics.ShardMetrics { return metrics.ShardMetrics{} }
func (p *passthrough) NewReplicaMetrics(string) metrics.ReplicaMetrics {
	return metrics.ReplicaMetrics{}
}

// The collector hands the cache's lag and the stalled watches on to the
// Prometheus provider behind it.
func TestCollectorPassesLagAndStalledWatchesOn(t *testing.T) {
	next := &passthrough{}
	c := newCollector(next)
	c.NewInformerMetrics("pods").WithDefaults().Lag.Set(0.25)
	c.NewReflectorMetrics("pods").WithDefaults().StalledWatches.Inc()
	if next.lag != 0.25 || next.stalled != 1 {
		t.Fatalf("lag %v, stalled %v reached the provider behind", next.lag, next.stalled)
	}
}

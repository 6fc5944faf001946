package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/metrics"
)

func TestCountingSourceCountsPagesAndTotal(t *testing.T) {
	src, err := fake.New(fake.Options[*unstructured.Unstructured]{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		if _, err := src.Create(obj("ConfigMap", "ns", fmt.Sprintf("cm-%02d", i), 0, nil)); err != nil {
			t.Fatal(err)
		}
	}
	p := &syncProgress{}
	cs := &countingSource[*unstructured.Unstructured]{inner: src, p: p}
	page, err := cs.List(t.Context(), listwatch.Options{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if p.items.Load() != 10 || p.total.Load() != 25 {
		t.Errorf("after one page: items %d total %d, want 10 and 25", p.items.Load(), p.total.Load())
	}
	for page.Continue != "" {
		if page, err = cs.List(t.Context(), listwatch.Options{Limit: 10, Continue: page.Continue}); err != nil {
			t.Fatal(err)
		}
	}
	if p.items.Load() != 25 {
		t.Errorf("after every page: items %d, want 25", p.items.Load())
	}
	// A new list starts over.
	if _, err := cs.List(t.Context(), listwatch.Options{}); err != nil || p.items.Load() != 25 || p.total.Load() != 25 {
		t.Errorf("relist: items %d total %d err %v", p.items.Load(), p.total.Load(), err)
	}
}

func TestEventPrinterHoldsEventsUntilFlushThenStreams(t *testing.T) {
	var out bytes.Buffer
	pt := podTarget("web")
	p := &eventPrinter{w: &out, layout: newTableLayout([]target{pt}, true, false), now: func() time.Time { return testNow }}
	h := p.handlerFor(pt)
	b := obj("Pod", "web", "b", 0, nil)
	a := obj("Pod", "web", "a", 0, nil)
	h.OnAdd(b, true)
	h.OnAdd(a, true)
	h.OnUpdate(b, b) // a change during the sync
	if out.Len() != 0 {
		t.Fatalf("printed before flush: %q", out.String())
	}
	p.flush()
	h.OnDelete(a, false)
	want := []string{"EVENT NAME READY STATUS RESTARTS AGE", "ADDED a 0/0 <none> 0 0s", "ADDED b 0/0 <none> 0 0s",
		"MODIFIED b 0/0 <none> 0 0s", "DELETED a 0/0 <none> 0 0s"}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i := range got {
		got[i] = strings.Join(strings.Fields(got[i]), " ")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := p.error(); err != nil {
		t.Error(err)
	}
}

func TestEventPrinterJSONAndWatchOnly(t *testing.T) {
	var out bytes.Buffer
	pt := podTarget("web")
	p := &eventPrinter{w: &out, output: outputJSON, watchOnly: true, now: func() time.Time { return testNow }}
	h := p.handlerFor(pt)
	h.OnAdd(obj("Pod", "web", "old", 0, nil), true)
	p.flush()
	h.OnAdd(obj("Pod", "web", "new", 0, nil), false)
	var ev struct {
		Type   string `json:"type"`
		Object struct {
			Metadata struct{ Name string } `json:"metadata"`
		} `json:"object"`
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("printed %q, want the new pod only", out.String())
	}
	if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil || ev.Type != "ADDED" || ev.Object.Metadata.Name != "new" {
		t.Errorf("line %q: %+v %v", lines[0], ev, err)
	}
}

func TestCollectorKeepsCountsAndForwards(t *testing.T) {
	next := &recordingProvider{}
	c := newCollector(next)
	m := c.NewInformerMetrics("pods")
	m.AddedEvents.Inc()
	m.AddedEvents.Inc()
	m.LastResourceVersion.Set(42)
	h := c.NewHandlerMetrics("pods", "h")
	h.Backlog.Set(3)
	h.Merged.Inc()
	got := c.counters("pods")
	if got.added.value() != 2 || got.lastRV.value() != 42 || got.backlog.value() != 3 || got.merged.value() != 1 {
		t.Errorf("kept added %d rv %v backlog %v merged %d", got.added.value(), got.lastRV.value(), got.backlog.value(), got.merged.value())
	}
	if next.incs != 3 || next.sets != 2 {
		t.Errorf("forwarded %d incs and %d sets, want 3 and 2", next.incs, next.sets)
	}
	if newCollector(nil).NewHandlerMetrics("x", "y").Latency != nil {
		t.Error("latency measured without a Prometheus provider")
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
func (r *recordingProvider) NewInformerMetrics(string) metrics.InformerMetrics {
	return metrics.InformerMetrics{AddedEvents: r, LastResourceVersion: r}
}
func (r *recordingProvider) NewHandlerMetrics(string, string) metrics.HandlerMetrics {
	return metrics.HandlerMetrics{Backlog: r, Merged: r}
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
	provider.NewInformerMetrics("pods").AddedEvents.Inc()
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
	if !strings.Contains(body.String(), `kinformer_informer_events_total{name="pods",type="ADDED"} 1`) {
		t.Errorf("/metrics lacks the informer's count:\n%s", body.String())
	}
}

package metrics_test

import (
	"testing"

	"github.com/kinformer/kinformer/metrics"
)

type counter struct{ n int }

func (c *counter) Inc() { c.n++ }

func TestWorkqueueMetricsWithDefaultsFillsOnlyNilFields(t *testing.T) {
	adds := &counter{}
	m := metrics.WorkqueueMetrics{Adds: adds}.WithDefaults()
	if m.WorkDuration == nil || m.Retries == nil || m.Priority == nil {
		t.Fatalf("nil instrument left: %+v", m)
	}
	m.Adds.Inc()
	m.Retries.Inc() // Discard: must not panic or reach adds
	m.WorkDuration.Observe(1)
	if adds.n != 1 {
		t.Fatalf("Adds reached %d times, want 1", adds.n)
	}
	p := m.Priority(-100)
	if p.Depth == nil || p.QueueLatency == nil {
		t.Fatalf("nil priority instrument left: %+v", p)
	}
	p.Depth.Set(3)
	p.QueueLatency.Observe(1)
}

func TestWorkqueueMetricsWithDefaultsFillsPriorityInstruments(t *testing.T) {
	depth := depthGauge(0)
	m := metrics.WorkqueueMetrics{Priority: func(int) metrics.WorkqueuePriorityMetrics {
		return metrics.WorkqueuePriorityMetrics{Depth: &depth}
	}}.WithDefaults()
	p := m.Priority(0)
	if p.QueueLatency == nil {
		t.Fatal("nil QueueLatency left")
	}
	p.QueueLatency.Observe(2) // Discard
	p.Depth.Set(4)
	if depth != 4 {
		t.Fatalf("depth %v, want 4", depth)
	}
}

type depthGauge float64

func (g *depthGauge) Set(v float64) { *g = depthGauge(v) }

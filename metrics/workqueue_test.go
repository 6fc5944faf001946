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
	if m.WorkDuration == nil || m.Retries == nil || m.QueueLatency == nil || m.QueueLatency(-100) == nil {
		t.Fatalf("nil instrument left: %+v", m)
	}
	m.Adds.Inc()
	m.Retries.Inc() // Discard: must not panic or reach adds
	m.WorkDuration.Observe(1)
	m.QueueLatency(0).Observe(1)
	if adds.n != 1 {
		t.Fatalf("Adds reached %d times, want 1", adds.n)
	}
}

func TestWorkqueueMetricsWithDefaultsFillsNilLatencyOfAPriority(t *testing.T) {
	var h hist
	m := metrics.WorkqueueMetrics{QueueLatency: func(p int) metrics.Histogram {
		if p == 0 {
			return &h
		}
		return nil
	}}.WithDefaults()
	m.QueueLatency(-100).Observe(1) // Discard
	m.QueueLatency(0).Observe(2)
	if h != 2 {
		t.Fatalf("histogram got %v, want 2", h)
	}
}

type hist float64

func (h *hist) Observe(v float64) { *h += hist(v) }

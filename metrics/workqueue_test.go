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
	if m.Depth == nil || m.QueueLatency == nil || m.WorkDuration == nil || m.Retries == nil {
		t.Fatalf("nil instrument left: %+v", m)
	}
	m.Adds.Inc()
	m.Retries.Inc() // Discard: must not panic or reach adds
	m.Depth.Set(3)
	m.QueueLatency.Observe(1)
	if adds.n != 1 {
		t.Fatalf("Adds reached %d times, want 1", adds.n)
	}
}

package prometheus

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/metrics"
)

// informerVecs are the vectors behind metrics.InformerMetrics and
// metrics.HandlerMetrics. Handler series carry the informer's name in
// "name" and the registration's in "handler".
type informerVecs struct {
	queueDepth, objects, lag *prometheus.GaugeVec

	backlog        *prometheus.GaugeVec
	merged, panics *prometheus.CounterVec
	latency        *prometheus.HistogramVec
}

func newInformerVecs(b *builder) informerVecs {
	b.sub = "informer"
	return informerVecs{
		queueDepth: b.gauge("queue_depth", "Keys waiting in the informer's delta queue.", "name"),
		objects:    b.gauge("objects", "Objects in the informer's cache.", "name"),
		lag:        b.gauge("lag_seconds", "Seconds from a change received from the server to its being readable in the informer's cache, sampled one change at a time.", "name"),
		backlog:    b.gauge("handler_backlog", "Handler calls pending for a handler, updated on every enqueue, merge and dequeue.", "name", "handler"),
		merged:     b.counter("handler_merged_total", "Notifications merged into a pending one because the handler fell behind.", "name", "handler"),
		panics:     b.counter("handler_panics_total", "Handler calls that panicked.", "name", "handler"),
		latency:    b.histogram("handler_duration_seconds", "How long, in seconds, each handler call took.", b.durations, "name", "handler"),
	}
}

func (v *informerVecs) metrics(name string) metrics.InformerMetrics {
	return metrics.InformerMetrics{
		QueueDepth: v.queueDepth.WithLabelValues(name),
		Objects:    v.objects.WithLabelValues(name),
		Lag:        v.lag.WithLabelValues(name),
	}
}

func (v *informerVecs) handlerMetrics(informer, handler string) metrics.HandlerMetrics {
	return metrics.HandlerMetrics{
		Backlog: v.backlog.WithLabelValues(informer, handler),
		Merged:  v.merged.WithLabelValues(informer, handler),
		Latency: v.latency.WithLabelValues(informer, handler),
		Panics:  v.panics.WithLabelValues(informer, handler),
	}
}

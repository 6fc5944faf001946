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

	ckptLoads, ckptRefused, ckptWrites, ckptWriteErrors *prometheus.CounterVec
	ckptObjects, ckptAge, ckptBytes                     *prometheus.GaugeVec
	ckptWriteDuration                                   *prometheus.HistogramVec
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

		ckptLoads:         b.counter("checkpoint_loads_total", "Checkpoints read and checked, before the server confirmed their resource version.", "name"),
		ckptObjects:       b.gauge("checkpoint_loaded_objects", "Objects of the last checkpoint read.", "name"),
		ckptAge:           b.gauge("checkpoint_loaded_age_seconds", "Age of the last checkpoint read, in seconds, when it was read.", "name"),
		ckptRefused:       b.counter("checkpoint_refused_total", "Checkpoints refused, by reason.", "name", "reason"),
		ckptWrites:        b.counter("checkpoint_writes_total", "Checkpoints written.", "name"),
		ckptWriteErrors:   b.counter("checkpoint_write_errors_total", "Checkpoint writes that failed.", "name"),
		ckptBytes:         b.gauge("checkpoint_bytes", "Size in bytes of the last checkpoint written.", "name"),
		ckptWriteDuration: b.histogram("checkpoint_write_duration_seconds", "How long, in seconds, each checkpoint write took.", b.durations, "name"),
	}
}

func (v *informerVecs) metrics(name string) metrics.InformerMetrics {
	return metrics.InformerMetrics{
		QueueDepth: v.queueDepth.WithLabelValues(name),
		Objects:    v.objects.WithLabelValues(name),
		Lag:        v.lag.WithLabelValues(name),
		Checkpoint: metrics.CheckpointMetrics{
			Loaded:        v.ckptLoads.WithLabelValues(name),
			LoadedObjects: v.ckptObjects.WithLabelValues(name),
			LoadedAge:     v.ckptAge.WithLabelValues(name),
			Refused:       func(reason string) metrics.Counter { return v.ckptRefused.WithLabelValues(name, reason) },
			Writes:        v.ckptWrites.WithLabelValues(name),
			WriteErrors:   v.ckptWriteErrors.WithLabelValues(name),
			WrittenBytes:  v.ckptBytes.WithLabelValues(name),
			WriteDuration: v.ckptWriteDuration.WithLabelValues(name),
		},
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

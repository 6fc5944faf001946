package prometheus

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/metrics"
)

// InformerOptions configures [NewInformerProvider]. The zero value registers
// with prometheus.DefaultRegisterer under the "informer" subsystem and no
// namespace.
type InformerOptions struct {
	// Registerer receives the collectors. Nil means
	// prometheus.DefaultRegisterer.
	Registerer prometheus.Registerer
	// Namespace prefixes every metric name ("" for none).
	Namespace string
	// Buckets for the duration histograms, in seconds. Nil means powers of
	// ten from 10µs to 1000s.
	Buckets []float64
}

// InformerProvider is a [metrics.InformerProvider] backed by Prometheus
// vectors. Informer series carry a "name" label with the informer's name;
// handler series also carry a "handler" label. Informers (or handlers) that
// share a name share series.
//
// It is safe for concurrent use. Create it with [NewInformerProvider].
type InformerProvider struct {
	lists, listErrors, watches, watchErrors, events *prometheus.CounterVec
	listDuration, watchDuration                     *prometheus.HistogramVec
	lastRV, queueDepth                              *prometheus.GaugeVec

	backlog        *prometheus.GaugeVec
	merged, panics *prometheus.CounterVec
	latency        *prometheus.HistogramVec
}

var _ metrics.InformerProvider = (*InformerProvider)(nil)

// NewInformerProvider builds the shared informer collectors and registers
// them with opts.Registerer. Registering twice with the same registerer
// fails with an error wrapping prometheus.AlreadyRegisteredError.
func NewInformerProvider(opts InformerOptions) (*InformerProvider, error) {
	reg := opts.Registerer
	if reg == nil {
		reg = prometheus.DefaultRegisterer
	}
	buckets := opts.Buckets
	if buckets == nil {
		buckets = prometheus.ExponentialBuckets(1e-5, 10, 9)
	}
	const sub = "informer"
	ns := opts.Namespace
	name := []string{"name"}
	handler := []string{"name", "handler"}
	counter := func(metric, help string, labels []string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: metric, Help: help}, labels)
	}
	gauge := func(metric, help string, labels []string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: metric, Help: help}, labels)
	}
	histogram := func(metric, help string, labels []string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: metric, Help: help, Buckets: buckets}, labels)
	}
	p := &InformerProvider{
		lists:         counter("lists_total", "Total number of list calls (pages) made to the source.", name),
		listErrors:    counter("list_errors_total", "Total number of list calls that failed.", name),
		listDuration:  histogram("list_duration_seconds", "How long, in seconds, each list call took.", name),
		watches:       counter("watches_total", "Total number of watch calls made to the source.", name),
		watchErrors:   counter("watch_errors_total", "Total number of watch calls that failed to open.", name),
		watchDuration: histogram("watch_duration_seconds", "How long, in seconds, each watch stream lasted.", name),
		events:        counter("events_total", "Total number of watch events received, by type.", []string{"name", "type"}),
		lastRV:        gauge("last_resource_version", "Resource version of the newest list or watch event received.", name),
		queueDepth:    gauge("queue_depth", "Number of keys waiting in the informer's delta queue.", name),
		backlog:       gauge("handler_backlog", "Number of handler calls pending for a handler.", handler),
		merged:        counter("handler_merged_total", "Total number of notifications merged into a pending one because the handler fell behind.", handler),
		panics:        counter("handler_panics_total", "Total number of handler calls that panicked.", handler),
		latency:       histogram("handler_duration_seconds", "How long, in seconds, each handler call took.", handler),
	}
	for _, c := range []prometheus.Collector{p.lists, p.listErrors, p.listDuration, p.watches, p.watchErrors,
		p.watchDuration, p.events, p.lastRV, p.queueDepth, p.backlog, p.merged, p.panics, p.latency} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register informer metrics: %w", err)
		}
	}
	return p, nil
}

// NewInformerMetrics implements [metrics.InformerProvider].
func (p *InformerProvider) NewInformerMetrics(informer string) metrics.InformerMetrics {
	return metrics.InformerMetrics{
		Lists:               p.lists.WithLabelValues(informer),
		ListErrors:          p.listErrors.WithLabelValues(informer),
		ListDuration:        p.listDuration.WithLabelValues(informer),
		Watches:             p.watches.WithLabelValues(informer),
		WatchErrors:         p.watchErrors.WithLabelValues(informer),
		WatchDuration:       p.watchDuration.WithLabelValues(informer),
		AddedEvents:         p.events.WithLabelValues(informer, "ADDED"),
		ModifiedEvents:      p.events.WithLabelValues(informer, "MODIFIED"),
		DeletedEvents:       p.events.WithLabelValues(informer, "DELETED"),
		BookmarkEvents:      p.events.WithLabelValues(informer, "BOOKMARK"),
		ErrorEvents:         p.events.WithLabelValues(informer, "ERROR"),
		LastResourceVersion: p.lastRV.WithLabelValues(informer),
		QueueDepth:          p.queueDepth.WithLabelValues(informer),
	}
}

// NewHandlerMetrics implements [metrics.InformerProvider].
func (p *InformerProvider) NewHandlerMetrics(informer, handler string) metrics.HandlerMetrics {
	return metrics.HandlerMetrics{
		Backlog: p.backlog.WithLabelValues(informer, handler),
		Merged:  p.merged.WithLabelValues(informer, handler),
		Latency: p.latency.WithLabelValues(informer, handler),
		Panics:  p.panics.WithLabelValues(informer, handler),
	}
}

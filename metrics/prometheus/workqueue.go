package prometheus

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/metrics"
)

// WorkqueueOptions configures [NewWorkqueueProvider]. The zero value
// registers with prometheus.DefaultRegisterer under the "workqueue" subsystem
// and no namespace.
type WorkqueueOptions struct {
	// Registerer receives the collectors. Nil means
	// prometheus.DefaultRegisterer.
	Registerer prometheus.Registerer
	// Namespace prefixes every metric name ("" for none).
	Namespace string
	// Buckets for the two duration histograms, in seconds. Nil means
	// powers of ten from 10ns to 1000s.
	Buckets []float64
}

// WorkqueueProvider is a [metrics.WorkqueueProvider] backed by Prometheus
// vectors labelled by queue name. Queues that share a name share series; for
// the in-flight gauges the most recently created queue of a name wins.
//
// The in-flight gauges (unfinished_work_seconds and
// longest_running_processor_seconds) are sampled from the queue at scrape
// time, so they need no goroutine and are never stale. The provider keeps a
// reference to each queue's sampler for as long as it lives, so it suits
// queues that live as long as the process, as controllers' queues do.
//
// It is safe for concurrent use. Create it with [NewWorkqueueProvider].
type WorkqueueProvider struct {
	depth          *prometheus.GaugeVec
	adds           *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	workDuration   *prometheus.HistogramVec
	retries        *prometheus.CounterVec
	unfinishedDesc *prometheus.Desc
	longestDesc    *prometheus.Desc

	// mu guards inFlight.
	mu sync.Mutex
	// inFlight maps a queue name to the sampler of its in-flight work, read
	// at every scrape.
	inFlight map[string]metrics.InFlightFunc
}

var _ metrics.WorkqueueProvider = (*WorkqueueProvider)(nil)

// NewWorkqueueProvider builds the work queue collectors and registers them
// with opts.Registerer. Registering twice with the same registerer fails with
// an error wrapping prometheus.AlreadyRegisteredError.
func NewWorkqueueProvider(opts WorkqueueOptions) (*WorkqueueProvider, error) {
	reg := opts.Registerer
	if reg == nil {
		reg = prometheus.DefaultRegisterer
	}
	buckets := opts.Buckets
	if buckets == nil {
		buckets = prometheus.ExponentialBuckets(1e-8, 10, 12)
	}
	const sub = "workqueue"
	label := []string{"name"}
	p := &WorkqueueProvider{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: opts.Namespace, Subsystem: sub, Name: "depth",
			Help: "Current number of items waiting in the work queue.",
		}, label),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: opts.Namespace, Subsystem: sub, Name: "adds_total",
			Help: "Total number of adds that made an item wait in the work queue.",
		}, label),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: opts.Namespace, Subsystem: sub, Name: "queue_duration_seconds",
			Help:    "How long, in seconds, an item waits in the work queue before a worker takes it.",
			Buckets: buckets,
		}, label),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: opts.Namespace, Subsystem: sub, Name: "work_duration_seconds",
			Help:    "How long, in seconds, a worker holds an item.",
			Buckets: buckets,
		}, label),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: opts.Namespace, Subsystem: sub, Name: "retries_total",
			Help: "Total number of rate-limited adds to the work queue.",
		}, label),
		unfinishedDesc: prometheus.NewDesc(
			prometheus.BuildFQName(opts.Namespace, sub, "unfinished_work_seconds"),
			"Sum of the running times, in seconds, of the items workers hold now.",
			label, nil),
		longestDesc: prometheus.NewDesc(
			prometheus.BuildFQName(opts.Namespace, sub, "longest_running_processor_seconds"),
			"Running time, in seconds, of the item a worker has held the longest.",
			label, nil),
		inFlight: make(map[string]metrics.InFlightFunc),
	}
	for _, c := range []prometheus.Collector{p.depth, p.adds, p.latency, p.workDuration, p.retries, inFlightCollector{p}} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register work queue metrics: %w", err)
		}
	}
	return p, nil
}

// NewWorkqueueMetrics implements [metrics.WorkqueueProvider].
func (p *WorkqueueProvider) NewWorkqueueMetrics(name string, inFlight metrics.InFlightFunc) metrics.WorkqueueMetrics {
	if inFlight != nil {
		p.mu.Lock()
		p.inFlight[name] = inFlight
		p.mu.Unlock()
	}
	return metrics.WorkqueueMetrics{
		Depth:        p.depth.WithLabelValues(name),
		Adds:         p.adds.WithLabelValues(name),
		QueueLatency: p.latency.WithLabelValues(name),
		WorkDuration: p.workDuration.WithLabelValues(name),
		Retries:      p.retries.WithLabelValues(name),
	}
}

// inFlightCollector reports the two in-flight gauges of every queue,
// sampling each queue when scraped.
type inFlightCollector struct{ p *WorkqueueProvider }

func (c inFlightCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.p.unfinishedDesc
	ch <- c.p.longestDesc
}

func (c inFlightCollector) Collect(ch chan<- prometheus.Metric) {
	c.p.mu.Lock()
	samplers := make(map[string]metrics.InFlightFunc, len(c.p.inFlight))
	for name, f := range c.p.inFlight {
		samplers[name] = f
	}
	c.p.mu.Unlock()
	// Sample outside p.mu: a sampler takes its queue's lock.
	for name, f := range samplers {
		unfinished, longest := f()
		ch <- prometheus.MustNewConstMetric(c.p.unfinishedDesc, prometheus.GaugeValue, unfinished, name)
		ch <- prometheus.MustNewConstMetric(c.p.longestDesc, prometheus.GaugeValue, longest, name)
	}
}

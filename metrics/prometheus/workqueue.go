package prometheus

import (
	"maps"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/metrics"
)

// workqueueVecs are the vectors behind metrics.WorkqueueMetrics, labelled
// by queue name, and the collector of the in-flight gauges.
//
// The in-flight gauges (unfinished_work_seconds and
// longest_running_processor_seconds) are sampled from the queue at scrape
// time, so they need no goroutine and are never stale. A reference to each
// queue's sampler is kept for as long as the provider lives; for queues
// that share a name the most recently created one wins.
type workqueueVecs struct {
	depth          *prometheus.GaugeVec
	adds, retries  *prometheus.CounterVec
	latency, work  *prometheus.HistogramVec
	unfinishedDesc *prometheus.Desc
	longestDesc    *prometheus.Desc

	// mu guards inFlight.
	mu sync.Mutex
	// inFlight maps a queue name to the sampler of its in-flight work, read
	// at every scrape.
	inFlight map[string]metrics.InFlightFunc
}

func newWorkqueueVecs(b *builder) *workqueueVecs {
	b.sub = "workqueue"
	v := &workqueueVecs{
		depth:   b.gauge("depth", "Current number of items waiting in the work queue.", "name"),
		adds:    b.counter("adds_total", "Total number of adds that made an item wait in the work queue.", "name"),
		latency: b.histogram("queue_duration_seconds", "How long, in seconds, an item waits in the work queue before a worker takes it.", b.durations, "name"),
		work:    b.histogram("work_duration_seconds", "How long, in seconds, a worker holds an item.", b.durations, "name"),
		retries: b.counter("retries_total", "Total number of rate-limited adds to the work queue.", "name"),
		unfinishedDesc: prometheus.NewDesc(prometheus.BuildFQName(b.ns, b.sub, "unfinished_work_seconds"),
			"Sum of the running times, in seconds, of the items workers hold now.", []string{"name"}, nil),
		longestDesc: prometheus.NewDesc(prometheus.BuildFQName(b.ns, b.sub, "longest_running_processor_seconds"),
			"Running time, in seconds, of the item a worker has held the longest.", []string{"name"}, nil),
		inFlight: make(map[string]metrics.InFlightFunc),
	}
	b.add(inFlightCollector{v})
	return v
}

func (v *workqueueVecs) metrics(name string, inFlight metrics.InFlightFunc) metrics.WorkqueueMetrics {
	if inFlight != nil {
		v.mu.Lock()
		v.inFlight[name] = inFlight
		v.mu.Unlock()
	}
	return metrics.WorkqueueMetrics{
		Depth:        v.depth.WithLabelValues(name),
		Adds:         v.adds.WithLabelValues(name),
		QueueLatency: v.latency.WithLabelValues(name),
		WorkDuration: v.work.WithLabelValues(name),
		Retries:      v.retries.WithLabelValues(name),
	}
}

// inFlightCollector reports the two in-flight gauges of every queue,
// sampling each queue when scraped.
type inFlightCollector struct{ v *workqueueVecs }

func (c inFlightCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.v.unfinishedDesc
	ch <- c.v.longestDesc
}

func (c inFlightCollector) Collect(ch chan<- prometheus.Metric) {
	c.v.mu.Lock()
	samplers := maps.Clone(c.v.inFlight)
	c.v.mu.Unlock()
	// Sample outside mu: a sampler takes its queue's lock.
	for name, f := range samplers {
		unfinished, longest := f()
		ch <- prometheus.MustNewConstMetric(c.v.unfinishedDesc, prometheus.GaugeValue, unfinished, name)
		ch <- prometheus.MustNewConstMetric(c.v.longestDesc, prometheus.GaugeValue, longest, name)
	}
}

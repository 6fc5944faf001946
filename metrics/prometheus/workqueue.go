package prometheus

import (
	"maps"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/metrics"
)

// workqueueVecs are the vectors behind metrics.WorkqueueMetrics, labelled
// by queue name (and priority), and the collector of the sampled gauges.
//
// The sampled gauges (depth, unfinished_work_seconds,
// longest_running_processor_seconds and oldest_waiting_seconds) are read
// from the queue at scrape time, so they need no goroutine and are never
// stale. A reference to each queue's sampler is kept for as long as the
// provider lives; for queues that share a name the most recently created
// one wins.
type workqueueVecs struct {
	adds, retries  *prometheus.CounterVec
	latency, work  *prometheus.HistogramVec
	depthDesc      *prometheus.Desc
	unfinishedDesc *prometheus.Desc
	longestDesc    *prometheus.Desc
	oldestDesc     *prometheus.Desc

	// mu guards samplers.
	mu sync.Mutex
	// samplers maps a queue name to its sampler, read at every scrape.
	samplers map[string]metrics.WorkqueueSampler
}

func newWorkqueueVecs(b *builder) *workqueueVecs {
	b.sub = "workqueue"
	v := &workqueueVecs{
		adds:    b.counter("adds_total", "Total number of adds that made an item wait in the work queue.", "name"),
		latency: b.histogram("queue_duration_seconds", "How long, in seconds, an item waits in the work queue before a worker takes it, by the priority it was taken at.", b.durations, "name", "priority"),
		work:    b.histogram("work_duration_seconds", "How long, in seconds, a worker holds an item.", b.durations, "name"),
		retries: b.counter("retries_total", "Total number of rate-limited adds to the work queue.", "name"),
		depthDesc: prometheus.NewDesc(prometheus.BuildFQName(b.ns, b.sub, "depth"),
			"Current number of items waiting in the work queue, by priority.", []string{"name", "priority"}, nil),
		unfinishedDesc: prometheus.NewDesc(prometheus.BuildFQName(b.ns, b.sub, "unfinished_work_seconds"),
			"Sum of the running times, in seconds, of the items workers hold now.", []string{"name"}, nil),
		longestDesc: prometheus.NewDesc(prometheus.BuildFQName(b.ns, b.sub, "longest_running_processor_seconds"),
			"Running time, in seconds, of the item a worker has held the longest.", []string{"name"}, nil),
		oldestDesc: prometheus.NewDesc(prometheus.BuildFQName(b.ns, b.sub, "oldest_waiting_seconds"),
			"Age, in seconds, of the item waiting longest in the work queue at each priority (0 if none waits).", []string{"name", "priority"}, nil),
		samplers: make(map[string]metrics.WorkqueueSampler),
	}
	b.add(sampledCollector{v})
	return v
}

func (v *workqueueVecs) metrics(name string, sample metrics.WorkqueueSampler) metrics.WorkqueueMetrics {
	if sample != nil {
		v.mu.Lock()
		v.samplers[name] = sample
		v.mu.Unlock()
	}
	return metrics.WorkqueueMetrics{
		Adds: v.adds.WithLabelValues(name),
		QueueLatency: func(p int) metrics.Histogram {
			return v.latency.WithLabelValues(name, strconv.Itoa(p))
		},
		WorkDuration: v.work.WithLabelValues(name),
		Retries:      v.retries.WithLabelValues(name),
	}
}

// sampledCollector reports the sampled gauges of every queue, sampling
// each queue when scraped.
type sampledCollector struct{ v *workqueueVecs }

func (c sampledCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.v.depthDesc
	ch <- c.v.unfinishedDesc
	ch <- c.v.longestDesc
	ch <- c.v.oldestDesc
}

func (c sampledCollector) Collect(ch chan<- prometheus.Metric) {
	c.v.mu.Lock()
	samplers := maps.Clone(c.v.samplers)
	c.v.mu.Unlock()
	// Sample outside mu: a sampler takes its queue's lock.
	for name, f := range samplers {
		s := f()
		ch <- prometheus.MustNewConstMetric(c.v.unfinishedDesc, prometheus.GaugeValue, s.Unfinished, name)
		ch <- prometheus.MustNewConstMetric(c.v.longestDesc, prometheus.GaugeValue, s.Longest, name)
		for _, p := range s.Priorities {
			prio := strconv.Itoa(p.Priority)
			ch <- prometheus.MustNewConstMetric(c.v.depthDesc, prometheus.GaugeValue, float64(p.Depth), name, prio)
			ch <- prometheus.MustNewConstMetric(c.v.oldestDesc, prometheus.GaugeValue, p.Oldest, name, prio)
		}
	}
}

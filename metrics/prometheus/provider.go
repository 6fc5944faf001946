package prometheus

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/metrics"
)

// Options configures [NewProvider]. The zero value registers with
// prometheus.DefaultRegisterer, without a namespace, with the default
// buckets.
type Options struct {
	// Registerer receives the collectors. Nil means
	// prometheus.DefaultRegisterer.
	Registerer prometheus.Registerer
	// Namespace prefixes every metric name ("" for none). The subsystems
	// are fixed ("reflector", "informer", "workqueue", "shard"): they say which
	// object reports.
	Namespace string
	// DurationBuckets are the buckets of every histogram of seconds
	// (lists, watches, back-off, handler calls, work queue waits and
	// work). Nil means powers of ten from 10ns to 1000s.
	DurationBuckets []float64
	// SizeBuckets are the buckets of reflector_list_items, in objects.
	// Nil means powers of ten from 1 to 1,000,000.
	SizeBuckets []float64
}

// Provider implements metrics.Provider, metrics.WorkqueueProvider and
// metrics.ShardProvider with Prometheus vectors. It is safe for concurrent use. Create it with
// [NewProvider].
//
// Series are never deleted: a removed handler's or a stopped informer's
// series keep their last values. It suits objects that live as long as
// the process, as a controller's informers, handlers and queues do.
type Provider struct {
	reflector reflectorVecs
	informer  informerVecs
	workqueue *workqueueVecs
	shard     shardVecs
}

var (
	_ metrics.Provider          = (*Provider)(nil)
	_ metrics.WorkqueueProvider = (*Provider)(nil)
	_ metrics.ShardProvider     = (*Provider)(nil)
)

// NewProvider builds every collector and registers them with
// opts.Registerer. If one fails to register, those registered before it
// are unregistered and the error, which wraps the registerer's (for
// example a prometheus.AlreadyRegisteredError when the same registerer
// already holds a provider with the same namespace), is returned.
func NewProvider(opts Options) (*Provider, error) {
	reg := opts.Registerer
	if reg == nil {
		reg = prometheus.DefaultRegisterer
	}
	b := &builder{ns: opts.Namespace, durations: opts.DurationBuckets, sizes: opts.SizeBuckets}
	if b.durations == nil {
		b.durations = prometheus.ExponentialBuckets(1e-8, 10, 12)
	}
	if b.sizes == nil {
		b.sizes = prometheus.ExponentialBuckets(1, 10, 7)
	}
	p := &Provider{
		reflector: newReflectorVecs(b),
		informer:  newInformerVecs(b),
		workqueue: newWorkqueueVecs(b),
		shard:     newShardVecs(b),
	}
	for i, c := range b.collectors {
		if err := reg.Register(c); err != nil {
			for _, done := range b.collectors[:i] {
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("metrics/prometheus: register: %w", err)
		}
	}
	return p, nil
}

// NewReflectorMetrics implements metrics.Provider.
func (p *Provider) NewReflectorMetrics(name string) metrics.ReflectorMetrics {
	return p.reflector.metrics(name)
}

// NewInformerMetrics implements metrics.Provider.
func (p *Provider) NewInformerMetrics(name string) metrics.InformerMetrics {
	return p.informer.metrics(name)
}

// NewHandlerMetrics implements metrics.Provider.
func (p *Provider) NewHandlerMetrics(informer, handler string) metrics.HandlerMetrics {
	return p.informer.handlerMetrics(informer, handler)
}

// NewWorkqueueMetrics implements metrics.WorkqueueProvider.
func (p *Provider) NewWorkqueueMetrics(name string, sample metrics.WorkqueueSampler) metrics.WorkqueueMetrics {
	return p.workqueue.metrics(name, sample)
}

// NewShardMetrics implements metrics.ShardProvider.
func (p *Provider) NewShardMetrics(name string) metrics.ShardMetrics {
	return p.shard.shardMetrics(name)
}

// NewReplicaMetrics implements metrics.ShardProvider.
func (p *Provider) NewReplicaMetrics(group string) metrics.ReplicaMetrics {
	return p.shard.replicaMetrics(group)
}

// builder makes the vectors of one subsystem and collects them for
// registration.
type builder struct {
	ns, sub          string
	durations, sizes []float64
	collectors       []prometheus.Collector
}

func (b *builder) add(c prometheus.Collector) { b.collectors = append(b.collectors, c) }

func (b *builder) counter(name, help string, labels ...string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: b.ns, Subsystem: b.sub, Name: name, Help: help}, labels)
	b.add(v)
	return v
}

func (b *builder) gauge(name, help string, labels ...string) *prometheus.GaugeVec {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: b.ns, Subsystem: b.sub, Name: name, Help: help}, labels)
	b.add(v)
	return v
}

func (b *builder) histogram(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: b.ns, Subsystem: b.sub, Name: name, Help: help, Buckets: buckets}, labels)
	b.add(v)
	return v
}

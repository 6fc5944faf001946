package cli

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/metrics"
)

// counter is a metrics.Counter the CLI can read back.
type counter struct{ n atomic.Int64 }

func (c *counter) Inc()         { c.n.Add(1) }
func (c *counter) value() int64 { return c.n.Load() }

// gauge is a metrics.Gauge the CLI can read back.
type gauge struct{ bits atomic.Uint64 }

func (g *gauge) Set(v float64)  { g.bits.Store(math.Float64bits(v)) }
func (g *gauge) value() float64 { return math.Float64frombits(g.bits.Load()) }

// informerCounters are the readable instruments of one informer: its
// reflector's traffic with the server, its queue and cache, and its handler
// (the CLI registers one handler per informer).
type informerCounters struct {
	lists, listErrors, watches, watchErrors          counter
	added, modified, deleted, bookmarks, errorEvents counter
	skipped, backoffs                                counter
	lastRV, queueDepth, objects                      gauge
	backlog                                          gauge
	merged, panics                                   counter
	// stalls counts the streams the reflector gave up for going silent
	// (reflector.ErrInitialEventsTimeout, ErrWatchStalled), as the
	// informer's error handler hears of them: failures and their retries
	// are not stalls.
	stalls counter
	// shard is set when the informer's source filters a shard (--shard).
	shard *shardCounters
	// ckpt are the instruments of the informer's checkpoint
	// (--checkpoint-dir).
	ckpt checkpointCounters
}

// checkpointCounters are the readable instruments of an informer's
// checkpoint.
type checkpointCounters struct {
	on             atomic.Bool // the informer has a checkpoint
	loaded         counter
	objects, age   gauge
	refused        counter
	reason         atomic.Pointer[string] // of the last refusal
	writes, errors counter
	bytes          gauge
}

// metrics returns the instruments, each also reported to n.
func (c *checkpointCounters) metrics(n metrics.CheckpointMetrics) metrics.CheckpointMetrics {
	return metrics.CheckpointMetrics{
		Loaded:        teeCounter{&c.loaded, n.Loaded},
		LoadedObjects: teeGauge{&c.objects, n.LoadedObjects},
		LoadedAge:     teeGauge{&c.age, n.LoadedAge},
		Refused: func(reason string) metrics.Counter {
			return hookCounter{teeCounter{&c.refused, n.Refused(reason)}, func() { c.reason.Store(&reason) }}
		},
		Writes:        teeCounter{&c.writes, n.Writes},
		WriteErrors:   teeCounter{&c.errors, n.WriteErrors},
		WrittenBytes:  teeGauge{&c.bytes, n.WrittenBytes},
		WriteDuration: n.WriteDuration,
	}
}

// shardCounters are the readable instruments of a shard-filtered source.
type shardCounters struct {
	// serverSide is 1 when the server applies the shard selector, 0 when
	// the source filters on the client; known turns true at the first
	// value (until then the mode is being found out).
	serverSide gauge
	known      atomic.Bool
	dropped    counter
}

// Set implements metrics.Gauge for ServerSide.
func (s *shardCounters) Set(v float64) { s.serverSide.Set(v); s.known.Store(true) }

// mode is how the shard is filtered: "server", "client", or "probing"
// before the first list says.
func (s *shardCounters) mode() string {
	switch {
	case !s.known.Load():
		return "probing"
	case s.serverSide.value() == 1:
		return "server"
	}
	return "client"
}

// collector is the metrics.Provider of the CLI's informers. It keeps every
// instrument the views read in memory, tells the health tracker (when set)
// about the reflector's successes and back-off delays, and forwards
// everything to next (Prometheus, when --metrics-addr is set). It is safe
// for concurrent use.
type collector struct {
	next provider
	// health, when set, hears of lists, watches and back-off delays. It is
	// set before the first informer asks for instruments and not changed
	// afterwards.
	health *health

	// mu guards byName.
	mu     sync.Mutex
	byName map[string]*informerCounters
}

// provider is what the collector forwards to: Prometheus's provider, which
// serves both the informers' and the shard filters' instruments.
type provider interface {
	metrics.Provider
	metrics.ShardProvider
}

func newCollector(next provider) *collector {
	return &collector{next: next, byName: make(map[string]*informerCounters)}
}

// counters returns the instruments of the informer called name, creating
// them on first use.
func (c *collector) counters(name string) *informerCounters {
	c.mu.Lock()
	defer c.mu.Unlock()
	ic, ok := c.byName[name]
	if !ok {
		ic = &informerCounters{}
		c.byName[name] = ic
	}
	return ic
}

// NewReflectorMetrics implements metrics.Provider. The reflector of an
// informer is named after the informer.
func (c *collector) NewReflectorMetrics(name string) metrics.ReflectorMetrics {
	ic := c.counters(name)
	var n metrics.ReflectorMetrics
	if c.next != nil {
		n = c.next.NewReflectorMetrics(name)
	}
	n = n.WithDefaults()
	h := c.health
	listed := func(v float64) {
		if h != nil {
			h.listed(name, int(v))
		}
	}
	list := func(m metrics.ListMetrics) metrics.ListMetrics {
		return metrics.ListMetrics{
			Attempts: teeCounter{&ic.lists, m.Attempts},
			Errors:   teeCounter{&ic.listErrors, m.Errors},
			Duration: m.Duration,
			Items:    hookHistogram{m.Items, listed},
			Last:     m.Last,
		}
	}
	return metrics.ReflectorMetrics{
		PagedLists:     list(n.PagedLists),
		StreamingLists: list(n.StreamingLists),
		Watches: teeCounter{&ic.watches, hookCounter{n.Watches, func() {
			if h != nil {
				h.watching(name)
			}
		}}},
		WatchErrors:    teeCounter{&ic.watchErrors, n.WatchErrors},
		WatchDuration:  n.WatchDuration,
		ShortWatches:   n.ShortWatches,
		StalledWatches: n.StalledWatches,
		AddedEvents:    teeCounter{&ic.added, n.AddedEvents},
		ModifiedEvents: teeCounter{&ic.modified, n.ModifiedEvents},
		DeletedEvents:  teeCounter{&ic.deleted, n.DeletedEvents},
		BookmarkEvents: teeCounter{&ic.bookmarks, n.BookmarkEvents},
		ErrorEvents:    teeCounter{&ic.errorEvents, n.ErrorEvents},
		Skipped:        teeCounter{&ic.skipped, n.Skipped},
		Backoff: hookHistogram{n.Backoff, func(seconds float64) {
			ic.backoffs.Inc()
			if h != nil {
				h.backoff(name, time.Duration(seconds*float64(time.Second)))
			}
		}},
		LastResourceVersion: teeGauge{&ic.lastRV, n.LastResourceVersion},
	}
}

// NewInformerMetrics implements metrics.Provider.
func (c *collector) NewInformerMetrics(name string) metrics.InformerMetrics {
	ic := c.counters(name)
	var n metrics.InformerMetrics
	if c.next != nil {
		n = c.next.NewInformerMetrics(name)
	}
	n = n.WithDefaults()
	return metrics.InformerMetrics{
		QueueDepth: teeGauge{&ic.queueDepth, n.QueueDepth},
		Objects:    teeGauge{&ic.objects, n.Objects},
		Lag:        n.Lag,
		Checkpoint: ic.ckpt.metrics(n.Checkpoint),
	}
}

// NewHandlerMetrics implements metrics.Provider.
func (c *collector) NewHandlerMetrics(informer, handler string) metrics.HandlerMetrics {
	ic := c.counters(informer)
	var n metrics.HandlerMetrics
	if c.next != nil {
		n = c.next.NewHandlerMetrics(informer, handler)
	}
	latency := n.Latency // nil unless Prometheus measures it: it costs two clock reads per call
	n = n.WithDefaults()
	return metrics.HandlerMetrics{
		Backlog: teeGauge{&ic.backlog, n.Backlog},
		Merged:  teeCounter{&ic.merged, n.Merged},
		Panics:  teeCounter{&ic.panics, n.Panics},
		Latency: latency,
	}
}

// shardMetrics returns the instruments of the shard filter of the informer
// called name, marking the informer as sharded.
func (c *collector) shardMetrics(name string) metrics.ShardMetrics {
	ic := c.counters(name)
	c.mu.Lock()
	if ic.shard == nil {
		ic.shard = &shardCounters{}
	}
	sc := ic.shard
	c.mu.Unlock()
	var n metrics.ShardMetrics
	if c.next != nil {
		n = c.next.NewShardMetrics(name)
	}
	n = n.WithDefaults()
	return metrics.ShardMetrics{
		ServerSide: teeGauge{sc, n.ServerSide},
		Dropped:    teeCounter{&sc.dropped, n.Dropped},
	}
}

type teeCounter struct{ a, b metrics.Counter }

func (t teeCounter) Inc() { t.a.Inc(); t.b.Inc() }

type teeGauge struct{ a, b metrics.Gauge }

func (t teeGauge) Set(v float64) { t.a.Set(v); t.b.Set(v) }

// hookCounter is a counter that also calls fn on every Inc.
type hookCounter struct {
	metrics.Counter
	fn func()
}

func (h hookCounter) Inc() { h.Counter.Inc(); h.fn() }

// hookHistogram is a histogram that also calls fn with every value.
type hookHistogram struct {
	metrics.Histogram
	fn func(float64)
}

func (h hookHistogram) Observe(v float64) { h.Histogram.Observe(v); h.fn(v) }

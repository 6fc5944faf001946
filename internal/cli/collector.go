package cli

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/kinformer/kinformer/metrics"
)

// counter is a metrics.Counter the CLI can read back.
type counter struct{ n atomic.Int64 }

func (c *counter) Inc()         { c.n.Add(1) }
func (c *counter) value() int64 { return c.n.Load() }

// gauge is a metrics.Gauge the CLI can read back.
type gauge struct{ bits atomic.Uint64 }

func (g *gauge) Set(v float64)     { g.bits.Store(math.Float64bits(v)) }
func (g *gauge) value() float64    { return math.Float64frombits(g.bits.Load()) }
func (g *gauge) Observe(v float64) { g.Set(v) }

// informerCounters are the readable instruments of one informer and of its
// handlers (summed).
type informerCounters struct {
	lists, listErrors, watches, watchErrors          counter
	added, modified, deleted, bookmarks, errorEvents counter
	lastRV, queueDepth                               gauge
	// backlog and merged are the handlers' (the CLI registers one handler
	// per informer).
	backlog gauge
	merged  counter
	panics  counter
}

// collector is a metrics.InformerProvider that keeps every instrument in
// memory for the stats view, and forwards to next (Prometheus, when
// --metrics-addr is set). It is safe for concurrent use.
type collector struct {
	next metrics.InformerProvider

	// mu guards byName.
	mu     sync.Mutex
	byName map[string]*informerCounters
}

func newCollector(next metrics.InformerProvider) *collector {
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

// NewInformerMetrics implements metrics.InformerProvider.
func (c *collector) NewInformerMetrics(name string) metrics.InformerMetrics {
	ic := c.counters(name)
	m := metrics.InformerMetrics{
		Lists: &ic.lists, ListErrors: &ic.listErrors,
		Watches: &ic.watches, WatchErrors: &ic.watchErrors,
		AddedEvents: &ic.added, ModifiedEvents: &ic.modified, DeletedEvents: &ic.deleted,
		BookmarkEvents: &ic.bookmarks, ErrorEvents: &ic.errorEvents,
		LastResourceVersion: &ic.lastRV, QueueDepth: &ic.queueDepth,
	}
	if c.next == nil {
		return m
	}
	n := c.next.NewInformerMetrics(name).WithDefaults()
	return metrics.InformerMetrics{
		Lists:               teeCounter{m.Lists, n.Lists},
		ListErrors:          teeCounter{m.ListErrors, n.ListErrors},
		ListDuration:        n.ListDuration,
		Watches:             teeCounter{m.Watches, n.Watches},
		WatchErrors:         teeCounter{m.WatchErrors, n.WatchErrors},
		WatchDuration:       n.WatchDuration,
		AddedEvents:         teeCounter{m.AddedEvents, n.AddedEvents},
		ModifiedEvents:      teeCounter{m.ModifiedEvents, n.ModifiedEvents},
		DeletedEvents:       teeCounter{m.DeletedEvents, n.DeletedEvents},
		BookmarkEvents:      teeCounter{m.BookmarkEvents, n.BookmarkEvents},
		ErrorEvents:         teeCounter{m.ErrorEvents, n.ErrorEvents},
		LastResourceVersion: teeGauge{m.LastResourceVersion, n.LastResourceVersion},
		QueueDepth:          teeGauge{m.QueueDepth, n.QueueDepth},
	}
}

// NewHandlerMetrics implements metrics.InformerProvider.
func (c *collector) NewHandlerMetrics(informer, handler string) metrics.HandlerMetrics {
	ic := c.counters(informer)
	m := metrics.HandlerMetrics{Backlog: &ic.backlog, Merged: &ic.merged, Panics: &ic.panics}
	if c.next == nil {
		return m
	}
	n := c.next.NewHandlerMetrics(informer, handler).WithDefaults()
	return metrics.HandlerMetrics{
		Backlog: teeGauge{m.Backlog, n.Backlog},
		Merged:  teeCounter{m.Merged, n.Merged},
		Panics:  teeCounter{m.Panics, n.Panics},
		Latency: n.Latency,
	}
}

type teeCounter struct{ a, b metrics.Counter }

func (t teeCounter) Inc() { t.a.Inc(); t.b.Inc() }

type teeGauge struct{ a, b metrics.Gauge }

func (t teeGauge) Set(v float64) { t.a.Set(v); t.b.Set(v) }

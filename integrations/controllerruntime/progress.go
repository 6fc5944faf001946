package controllerruntime

import (
	"sort"
	"sync"
	"weak"

	"github.com/prometheus/client_golang/prometheus"

	kcache "github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/reflector"
)

// progressCollector exposes, at each scrape, how every informer of the
// caches that use it is syncing (Options.Metrics): whether it has synced,
// how far its current or last list got against what it expects, and the
// stalled watches and abandoned streaming lists since it started. Several
// informers of one name (the same kind in several caches or namespaces)
// are summed; synced is 1 only when they all are.
type progressCollector struct {
	synced, listing, listed, expected, stalled, fallbacks *prometheus.Desc

	mu sync.Mutex
	// sources are the informers tracked, dropped once stopped or collected
	// by the garbage collector.
	sources []progressSource
}

// progressSource reads one informer's state; alive is false once it has
// stopped or is gone.
type progressSource struct {
	name string
	read func() (p reflector.Progress, synced, alive bool)
}

func newProgressCollector() *progressCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("kinformer_cache_"+name, help, []string{"name"}, nil)
	}
	return &progressCollector{
		synced:    d("synced", "1 when the informers of this name have synced (filled their cache from a list or a confirmed checkpoint), else 0."),
		listing:   d("listing", "1 while a list that fills the cache is under way (the first sync or a relist)."),
		listed:    d("sync_listed_objects", "Objects received by the current (or last) list."),
		expected:  d("sync_expected_objects", "Objects the current (or last) list is expected to hold, from the server's remaining count or the previous list; -1 when unknown."),
		stalled:   d("stalled_watches_total", "Watches closed and reopened because nothing came through them for longer than their timeout plus the bookmark interval."),
		fallbacks: d("list_fallbacks_total", "Streaming lists abandoned for a paged list (failed, or silent for the initial-events timeout before their end bookmark)."),
	}
}

// track adds inf to the informers reported. The collector keeps only a
// weak reference: an informer nobody holds any more is not kept alive.
func trackProgress[T kcache.Object](pc *progressCollector, inf *informer.Shared[T]) {
	if pc == nil {
		return
	}
	w := weak.Make(inf)
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.sources = append(pc.sources, progressSource{name: inf.Name(), read: func() (reflector.Progress, bool, bool) {
		inf := w.Value()
		if inf == nil || inf.IsStopped() {
			return reflector.Progress{}, false, false
		}
		return inf.Progress(), inf.HasSynced(), true
	}})
}

func (pc *progressCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pc.synced, pc.listing, pc.listed, pc.expected, pc.stalled, pc.fallbacks} {
		ch <- d
	}
}

type progressSum struct {
	synced, listing                      bool
	listed, expected, stalled, fallbacks float64
}

func (pc *progressCollector) Collect(ch chan<- prometheus.Metric) {
	pc.mu.Lock()
	sums := map[string]*progressSum{}
	kept := pc.sources[:0]
	for _, s := range pc.sources {
		p, synced, alive := s.read()
		if !alive {
			continue
		}
		kept = append(kept, s)
		sum, ok := sums[s.name]
		if !ok {
			sum = &progressSum{synced: true}
			sums[s.name] = sum
		}
		sum.synced = sum.synced && synced
		sum.listing = sum.listing || p.Listing
		sum.listed += float64(p.Objects)
		if p.Expected < 0 || sum.expected < 0 {
			sum.expected = -1
		} else {
			sum.expected += float64(p.Expected)
		}
		sum.stalled += float64(p.StalledWatches)
		sum.fallbacks += float64(p.Fallbacks)
	}
	clear(pc.sources[len(kept):])
	pc.sources = kept
	pc.mu.Unlock()
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	for _, n := range names {
		s := sums[n]
		ch <- prometheus.MustNewConstMetric(pc.synced, prometheus.GaugeValue, b(s.synced), n)
		ch <- prometheus.MustNewConstMetric(pc.listing, prometheus.GaugeValue, b(s.listing), n)
		ch <- prometheus.MustNewConstMetric(pc.listed, prometheus.GaugeValue, s.listed, n)
		ch <- prometheus.MustNewConstMetric(pc.expected, prometheus.GaugeValue, s.expected, n)
		ch <- prometheus.MustNewConstMetric(pc.stalled, prometheus.CounterValue, s.stalled, n)
		ch <- prometheus.MustNewConstMetric(pc.fallbacks, prometheus.CounterValue, s.fallbacks, n)
	}
}

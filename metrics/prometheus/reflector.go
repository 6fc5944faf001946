package prometheus

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/metrics"
)

// Values of the "mode" label of the list metrics.
const (
	modePaged     = "paged"
	modeStreaming = "streaming"
)

// reflectorVecs are the vectors behind metrics.ReflectorMetrics.
type reflectorVecs struct {
	lists, listErrors                                           *prometheus.CounterVec
	listDuration, listItems                                     *prometheus.HistogramVec
	lastListMode                                                *prometheus.GaugeVec
	watches, watchErrors, shortWatches, stalledWatches, skipped *prometheus.CounterVec
	watchDuration, backoff                                      *prometheus.HistogramVec
	events                                                      *prometheus.CounterVec
	lastRV                                                      *prometheus.GaugeVec
	failures                                                    *prometheus.CounterVec
	failing                                                     *prometheus.GaugeVec
}

func newReflectorVecs(b *builder) reflectorVecs {
	b.sub = "reflector"
	return reflectorVecs{
		lists:          b.counter("lists_total", "Lists started to fill the store, by mode (paged or streaming).", "name", "mode"),
		listErrors:     b.counter("list_errors_total", "Lists that failed, by mode; a failed streaming list falls back to a paged one.", "name", "mode"),
		listDuration:   b.histogram("list_duration_seconds", "How long, in seconds, each list took, by mode.", b.durations, "name", "mode"),
		listItems:      b.histogram("list_items", "Objects each successful list put in the store, by mode.", b.sizes, "name", "mode"),
		lastListMode:   b.gauge("last_list_mode", "1 for the mode of the last list that filled the store, 0 for the other.", "name", "mode"),
		watches:        b.counter("watches_total", "Watches read, opened or carried on from a streaming list.", "name"),
		watchErrors:    b.counter("watch_errors_total", "Watches that failed to open, failed while read, or delivered an Error event.", "name"),
		watchDuration:  b.histogram("watch_duration_seconds", "How long, in seconds, each watch was read.", b.durations, "name"),
		shortWatches:   b.counter("short_watches_total", "Watches that ended cleanly in under a second without an event.", "name"),
		stalledWatches: b.counter("stalled_watches_total", "Watches closed and reopened because nothing came through them past their timeout plus the bookmark interval.", "name"),
		events:         b.counter("events_total", "Watch events received after the store was filled, by type.", "name", "type"),
		skipped:        b.counter("skipped_total", "Listed objects and events dropped as unusable (wrong type, nil, no key).", "name"),
		backoff:        b.histogram("backoff_seconds", "Back-off delays, in seconds, before retries.", b.durations, "name"),
		lastRV:         b.gauge("last_resource_version", "Resource version the store reflects, when numeric.", "name"),
		failures:       b.counter("failures_total", "Failed requests to the source, by reason.", "name", "reason"),
		failing:        b.gauge("failing", "1 for the reason of the latest failure while no request has succeeded since, 0 otherwise.", "name", "reason"),
	}
}

func (v *reflectorVecs) listMetrics(name, mode string) metrics.ListMetrics {
	return metrics.ListMetrics{
		Attempts: v.lists.WithLabelValues(name, mode),
		Errors:   v.listErrors.WithLabelValues(name, mode),
		Duration: v.listDuration.WithLabelValues(name, mode),
		Items:    v.listItems.WithLabelValues(name, mode),
		Last:     v.lastListMode.WithLabelValues(name, mode),
	}
}

func (v *reflectorVecs) metrics(name string) metrics.ReflectorMetrics {
	return metrics.ReflectorMetrics{
		PagedLists:          v.listMetrics(name, modePaged),
		StreamingLists:      v.listMetrics(name, modeStreaming),
		Watches:             v.watches.WithLabelValues(name),
		WatchErrors:         v.watchErrors.WithLabelValues(name),
		WatchDuration:       v.watchDuration.WithLabelValues(name),
		ShortWatches:        v.shortWatches.WithLabelValues(name),
		StalledWatches:      v.stalledWatches.WithLabelValues(name),
		AddedEvents:         v.events.WithLabelValues(name, "ADDED"),
		ModifiedEvents:      v.events.WithLabelValues(name, "MODIFIED"),
		DeletedEvents:       v.events.WithLabelValues(name, "DELETED"),
		BookmarkEvents:      v.events.WithLabelValues(name, "BOOKMARK"),
		ErrorEvents:         v.events.WithLabelValues(name, "ERROR"),
		Skipped:             v.skipped.WithLabelValues(name),
		Backoff:             v.backoff.WithLabelValues(name),
		LastResourceVersion: v.lastRV.WithLabelValues(name),
		Failures:            func(reason string) metrics.Counter { return v.failures.WithLabelValues(name, reason) },
		Failing:             func(reason string) metrics.Gauge { return v.failing.WithLabelValues(name, reason) },
	}
}

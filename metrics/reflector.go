package metrics

// ReflectorProvider hands reflectors their instruments. reflector.New calls
// NewReflectorMetrics once per reflector, with the reflector's name.
//
// Implementations must be safe for concurrent use: reflectors may be
// created from any goroutine.
type ReflectorProvider interface {
	NewReflectorMetrics(name string) ReflectorMetrics
}

// ReflectorMetrics is the set of instruments one reflector updates, all
// from its list-watch loop goroutine. Any field may be nil, meaning "not
// reported"; the zero value reports nothing. Durations are measured on the
// reflector's clock, in seconds.
type ReflectorMetrics struct {
	// Lists counts attempts to fill the store (a paged list, or a
	// streaming list), ListErrors those that failed. ListDuration observes
	// each attempt's duration and ListedItems the number of objects each
	// successful one handed to the store.
	Lists        Counter
	ListErrors   Counter
	ListDuration Histogram
	ListedItems  Histogram
	// StreamingFallbacks counts streaming lists that failed and were
	// replaced by a plain list.
	StreamingFallbacks Counter
	// Watches counts watches read (opened, or carried on from a streaming
	// list), WatchErrors those that failed to open or ended with an error.
	// WatchDuration observes how long each one was read, and
	// WatchEvents how many events it delivered.
	Watches       Counter
	WatchErrors   Counter
	WatchDuration Histogram
	WatchEvents   Histogram
	// ShortWatches counts watches that ended cleanly in under a second
	// with no events (each followed by a relist).
	ShortWatches Counter
	// Skipped counts objects and events dropped as unusable: wrong type,
	// nil, or a key that cannot be computed.
	Skipped Counter
	// Backoff observes every back-off delay before a retry.
	Backoff Histogram
	// LastResourceVersion is set to the version the store reflects after
	// each list, event and bookmark, when it parses as a number.
	LastResourceVersion Gauge
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m ReflectorMetrics) WithDefaults() ReflectorMetrics {
	for _, c := range []*Counter{&m.Lists, &m.ListErrors, &m.StreamingFallbacks, &m.Watches,
		&m.WatchErrors, &m.ShortWatches, &m.Skipped} {
		if *c == nil {
			*c = Discard{}
		}
	}
	for _, h := range []*Histogram{&m.ListDuration, &m.ListedItems, &m.WatchDuration, &m.WatchEvents, &m.Backoff} {
		if *h == nil {
			*h = Discard{}
		}
	}
	if m.LastResourceVersion == nil {
		m.LastResourceVersion = Discard{}
	}
	return m
}

package metrics

// InformerProvider hands shared informers their instruments.
// informer.NewShared calls NewInformerMetrics once per informer, with the
// informer's name, and NewHandlerMetrics once per handler registration, with
// the informer's and the registration's names.
//
// Implementations must be safe for concurrent use: informers and handlers
// are created from any goroutine.
type InformerProvider interface {
	NewInformerMetrics(informer string) InformerMetrics
	NewHandlerMetrics(informer, handler string) HandlerMetrics
}

// InformerMetrics is the set of instruments one shared informer updates: its
// traffic with the source, the events it received, and its delta queue. Any
// field may be nil, meaning "not reported"; the zero value reports nothing.
type InformerMetrics struct {
	// Lists counts list calls (one per page), and ListErrors those that
	// failed; ListDuration observes each call's duration in seconds.
	Lists        Counter
	ListErrors   Counter
	ListDuration Histogram
	// Watches counts watch calls, and WatchErrors those that failed to
	// open; WatchDuration observes, in seconds, how long each opened
	// watch stream lasted.
	Watches       Counter
	WatchErrors   Counter
	WatchDuration Histogram
	// Events counts watch events by type, one counter each.
	AddedEvents    Counter
	ModifiedEvents Counter
	DeletedEvents  Counter
	BookmarkEvents Counter
	ErrorEvents    Counter
	// LastResourceVersion is set to the resource version of the newest
	// list or watch event, when it parses as a number (as etcd's do).
	LastResourceVersion Gauge
	// QueueDepth is set to the number of keys waiting in the informer's
	// delta queue after each one is processed.
	QueueDepth Gauge
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m InformerMetrics) WithDefaults() InformerMetrics {
	for _, c := range []*Counter{&m.Lists, &m.ListErrors, &m.Watches, &m.WatchErrors,
		&m.AddedEvents, &m.ModifiedEvents, &m.DeletedEvents, &m.BookmarkEvents, &m.ErrorEvents} {
		if *c == nil {
			*c = Discard{}
		}
	}
	for _, h := range []*Histogram{&m.ListDuration, &m.WatchDuration} {
		if *h == nil {
			*h = Discard{}
		}
	}
	for _, g := range []*Gauge{&m.LastResourceVersion, &m.QueueDepth} {
		if *g == nil {
			*g = Discard{}
		}
	}
	return m
}

// HandlerMetrics is the set of instruments one handler registration of a
// shared informer updates. Any field may be nil, meaning "not reported"; the
// zero value reports nothing. Backlog and Merged are updated with the
// registration's delivery lock held, so they must not block.
type HandlerMetrics struct {
	// Backlog is set to the number of handler calls pending, each time the
	// delivery goroutine takes one.
	Backlog Gauge
	// Merged counts notifications folded into one already pending for the
	// same object, because the handler fell behind.
	Merged Counter
	// Latency observes, in seconds, how long each handler call took. It is
	// measured only when the field is set (it costs two clock reads).
	Latency Histogram
	// Panics counts handler calls that panicked.
	Panics Counter
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m HandlerMetrics) WithDefaults() HandlerMetrics {
	if m.Backlog == nil {
		m.Backlog = Discard{}
	}
	if m.Merged == nil {
		m.Merged = Discard{}
	}
	if m.Latency == nil {
		m.Latency = Discard{}
	}
	if m.Panics == nil {
		m.Panics = Discard{}
	}
	return m
}

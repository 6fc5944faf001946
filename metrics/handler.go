package metrics

// HandlerMetrics is the set of instruments one handler registration of a
// shared informer updates. Any field may be nil, meaning "not reported";
// the zero value reports nothing. Backlog and Merged are updated with the
// registration's delivery lock held, on the informer's goroutine as well
// as the handler's, so they must not block.
type HandlerMetrics struct {
	// Backlog is set to the number of handler calls pending (the one in
	// progress, if any, excluded) every time that number changes: when a
	// notification is queued or merged into a pending one, and when the
	// delivery goroutine takes one. It therefore keeps growing while the
	// handler is stuck in a call, up to the bound set by merging.
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
	orDiscard([]*Counter{&m.Merged, &m.Panics}, []*Gauge{&m.Backlog}, []*Histogram{&m.Latency})
	return m
}

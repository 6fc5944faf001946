package metrics

// WorkqueueProvider hands a work queue its instruments. It is separate from
// [Provider] because a queue belongs to a controller, not to an informer;
// prometheus.Provider implements both. workqueue.New calls
// NewWorkqueueMetrics once per queue, with the queue's name (which may be
// empty) and a function that samples the queue's in-flight work.
//
// Implementations must be safe for concurrent use: queues may be created from
// any goroutine.
type WorkqueueProvider interface {
	NewWorkqueueMetrics(name string, inFlight InFlightFunc) WorkqueueMetrics
}

// InFlightFunc samples the items a queue's workers hold right now (taken by
// Get, not yet Done): unfinished is the sum of their running times in
// seconds, longest the running time of the oldest. It takes the queue's lock
// for a time proportional to the number of items the queue tracks, so call it
// when the value is needed (at scrape time), not in a loop. It is safe for
// concurrent use and remains callable after the queue has shut down.
type InFlightFunc func() (unfinished, longest float64)

// WorkqueueMetrics is the set of instruments one queue updates. Any field may
// be nil, meaning "not reported"; the zero value reports nothing.
//
// The queue updates the instruments while holding its own lock, so they must
// not block or call back into the queue.
type WorkqueueMetrics struct {
	// Depth is set to the number of items waiting to be handed to a worker
	// (the queue's Len) after every change.
	Depth Gauge
	// Adds counts adds that made an item wait (adds of an item that was
	// already waiting are de-duplicated and not counted).
	Adds Counter
	// QueueLatency observes, in seconds, how long each item waited between
	// the add that made it wait and the Get that handed it out.
	QueueLatency Histogram
	// WorkDuration observes, in seconds, how long each item was held by a
	// worker, from Get to Done.
	WorkDuration Histogram
	// Retries counts rate-limited adds (AddRateLimited).
	Retries Counter
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m WorkqueueMetrics) WithDefaults() WorkqueueMetrics {
	orDiscard([]*Counter{&m.Adds, &m.Retries}, []*Gauge{&m.Depth}, []*Histogram{&m.QueueLatency, &m.WorkDuration})
	return m
}

package metrics

// WorkqueueProvider hands a work queue its instruments. It is separate from
// [Provider] because a queue belongs to a controller, not to an informer;
// prometheus.Provider implements both. workqueue.New calls
// NewWorkqueueMetrics once per queue, with the queue's name (which may be
// empty) and a function that samples what the queue holds.
//
// Implementations must be safe for concurrent use: queues may be created from
// any goroutine.
type WorkqueueProvider interface {
	NewWorkqueueMetrics(name string, sample WorkqueueSampler) WorkqueueMetrics
}

// WorkqueueSampler reads what a queue holds right now. It takes the queue's
// lock for a time proportional to the number of items the queue tracks
// (about a millisecond per 100,000 items), so call it when the values are
// needed (at scrape time), not in a loop. It is safe for concurrent use and
// remains callable after the queue has shut down.
type WorkqueueSampler func() WorkqueueSample

// WorkqueueSample is what a queue held at one moment. Durations are in
// seconds.
type WorkqueueSample struct {
	// Unfinished is the sum of the running times of the items workers
	// hold (taken by Get, not yet Done); Longest is the running time of
	// the one held longest.
	Unfinished, Longest float64
	// Oldest has one entry per priority the queue has items waiting at,
	// or had recently, highest priority first: the age of the item
	// waiting longest at that priority (0 when none waits now), counted
	// from the add that made it wait.
	Oldest []PriorityAge
}

// PriorityAge is the age of the oldest item waiting at one priority.
type PriorityAge struct {
	Priority int
	Seconds  float64
}

// WorkqueueMetrics is the set of instruments one queue updates. Any field may
// be nil, meaning "not reported"; the zero value reports nothing.
//
// The queue updates the instruments while holding its own lock, so they must
// not block or call back into the queue.
type WorkqueueMetrics struct {
	// Adds counts adds that made an item wait (adds of an item that was
	// already waiting are de-duplicated and not counted, even when they
	// raise its priority).
	Adds Counter
	// WorkDuration observes, in seconds, how long each item was held by a
	// worker, from Get to Done.
	WorkDuration Histogram
	// Retries counts rate-limited adds (AddRateLimited).
	Retries Counter
	// Priority returns the instruments of the items at one priority. The
	// queue calls it when items first wait at that priority (again after
	// a long spell without, if many priorities were used meanwhile), so
	// it must return the same instruments for the same priority every
	// time.
	Priority func(priority int) WorkqueuePriorityMetrics
}

// WorkqueuePriorityMetrics are the instruments of one priority of a queue.
// Any field may be nil, meaning "not reported".
type WorkqueuePriorityMetrics struct {
	// Depth is set to the number of items waiting at this priority after
	// every change; the queue's Len is the sum over its priorities. An
	// item whose priority is raised moves from one depth to the other.
	Depth Gauge
	// QueueLatency observes, in seconds, how long each item handed out at
	// this priority waited, from the add that made it wait to the Get that
	// handed it out.
	QueueLatency Histogram
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m WorkqueueMetrics) WithDefaults() WorkqueueMetrics {
	orDiscard([]*Counter{&m.Adds, &m.Retries}, nil, []*Histogram{&m.WorkDuration})
	if m.Priority == nil {
		m.Priority = func(int) WorkqueuePriorityMetrics { return WorkqueuePriorityMetrics{}.WithDefaults() }
	} else {
		f := m.Priority
		m.Priority = func(p int) WorkqueuePriorityMetrics { return f(p).WithDefaults() }
	}
	return m
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m WorkqueuePriorityMetrics) WithDefaults() WorkqueuePriorityMetrics {
	orDiscard(nil, []*Gauge{&m.Depth}, []*Histogram{&m.QueueLatency})
	return m
}

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
	// Priorities has one entry per priority the queue has items waiting
	// at, or had recently, highest priority first.
	Priorities []PrioritySample
}

// PrioritySample is what waits in a queue at one priority.
type PrioritySample struct {
	Priority int
	// Depth is the number of items waiting at this priority to be handed
	// to a worker; the queue's Len is the sum over its priorities.
	Depth int
	// Oldest is the age, in seconds, of the item waiting longest at this
	// priority (0 when none waits), counted from the add that made it
	// wait.
	Oldest float64
}

// WorkqueueMetrics is the set of instruments one queue updates. Any field may
// be nil, meaning "not reported"; the zero value reports nothing. What the
// queue holds (depth, oldest item, work in flight) is sampled instead, see
// WorkqueueSampler.
//
// The queue updates the instruments while holding its own lock, so they must
// not block or call back into the queue. An Add or Done made while another
// goroutine holds the queue may be recorded a little later, with the time
// it was made, when the queue next takes its lock (at the latest when it is
// sampled).
type WorkqueueMetrics struct {
	// Adds counts adds that made an item wait (adds of an item that was
	// already waiting are de-duplicated and not counted, even when they
	// raise its priority).
	Adds Counter
	// QueueLatency returns the histogram of one priority: it observes, in
	// seconds, how long each item handed out at that priority waited, from
	// the add that made it wait to the Get that handed it out. The queue
	// calls it when items first wait at a priority (again after a long
	// spell without, if many priorities were used meanwhile), so it must
	// return the same histogram for the same priority every time.
	QueueLatency func(priority int) Histogram
	// WorkDuration observes, in seconds, how long each item was held by a
	// worker, from Get to Done.
	WorkDuration Histogram
	// Retries counts rate-limited adds (AddRateLimited).
	Retries Counter
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m WorkqueueMetrics) WithDefaults() WorkqueueMetrics {
	orDiscard([]*Counter{&m.Adds, &m.Retries}, nil, []*Histogram{&m.WorkDuration})
	if f := m.QueueLatency; f == nil {
		m.QueueLatency = func(int) Histogram { return Discard{} }
	} else {
		m.QueueLatency = func(p int) Histogram {
			if h := f(p); h != nil {
				return h
			}
			return Discard{}
		}
	}
	return m
}

package metrics

// InformerMetrics is the set of instruments one shared informer, or one
// plain controller, updates from its pop loop: what sits between its
// reflector and its handlers. The reflector reports the traffic with the
// source ([ReflectorMetrics]) and each handler its own delivery
// ([HandlerMetrics]). Any field may be nil, meaning "not reported"; the
// zero value reports nothing.
type InformerMetrics struct {
	// QueueDepth is set to the number of keys waiting in the delta queue
	// after each key is processed.
	QueueDepth Gauge
	// Objects is set to the number of objects in the cache after each key
	// is processed.
	Objects Gauge
	// Lag is how far, in seconds, the cache trails the server's changes
	// the informer has received: the time from the reflector handing a
	// change over to that change being readable in the cache, measured on
	// one change at a time (the next sample is the first change after the
	// previous one is cached), so it is set about as often as the queue
	// drains. A stuck or slow pop loop shows as a large value once the
	// sample gets through. Shared informers report it; the plain
	// controller does not.
	Lag Gauge
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m InformerMetrics) WithDefaults() InformerMetrics {
	orDiscard(nil, []*Gauge{&m.QueueDepth, &m.Objects, &m.Lag}, nil)
	return m
}

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
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m InformerMetrics) WithDefaults() InformerMetrics {
	orDiscard(nil, []*Gauge{&m.QueueDepth, &m.Objects}, nil)
	return m
}

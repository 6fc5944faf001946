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
	// Checkpoint is the informer's checkpoint, when it has one.
	Checkpoint CheckpointMetrics
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m InformerMetrics) WithDefaults() InformerMetrics {
	orDiscard(nil, []*Gauge{&m.QueueDepth, &m.Objects, &m.Lag}, nil)
	m.Checkpoint = m.Checkpoint.WithDefaults()
	return m
}

// CheckpointMetrics is the set of instruments of one informer's
// checkpoint (informer.CheckpointOptions): what was read at the start,
// what was refused and why, and what is written. Any field may be nil.
type CheckpointMetrics struct {
	// Loaded counts checkpoints whose objects were read and checked: once
	// the server has confirmed their version, or when it no longer has it
	// and the informer relists over them. LoadedObjects and LoadedAge are
	// set to the last one's object count and age in seconds (now minus
	// the time it was written).
	Loaded        Counter
	LoadedObjects Gauge
	LoadedAge     Gauge
	// Refused returns the counter of checkpoints refused for reason, one
	// of the CheckpointRefused* values. nil: not reported.
	Refused func(reason string) Counter
	// Writes counts checkpoints written, WriteErrors the writes that
	// failed; WrittenBytes is set to the size of the last file written,
	// and WriteDuration observes how long each write took (snapshot,
	// encoding, sync and rename).
	Writes        Counter
	WriteErrors   Counter
	WrittenBytes  Gauge
	WriteDuration Histogram
}

// Reasons of CheckpointMetrics.Refused.
const (
	CheckpointRefusedNotRegular   = "not-regular"   // the path is a directory, FIFO, device or socket
	CheckpointRefusedCorrupt      = "corrupt"       // truncated, bad checksum, malformed
	CheckpointRefusedVersion      = "version"       // another format version
	CheckpointRefusedOtherCluster = "other-cluster" // written for another cluster
	CheckpointRefusedNoCluster    = "no-cluster"    // this cluster's identity could not be read
	CheckpointRefusedMismatch     = "mismatch"      // another resource, selection, type or encoding
	CheckpointRefusedServerBehind = "server-behind" // the server answered "too large resource version"
)

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m CheckpointMetrics) WithDefaults() CheckpointMetrics {
	orDiscard([]*Counter{&m.Loaded, &m.Writes, &m.WriteErrors}, []*Gauge{&m.LoadedObjects, &m.LoadedAge, &m.WrittenBytes},
		[]*Histogram{&m.WriteDuration})
	if m.Refused == nil {
		m.Refused = func(string) Counter { return Discard{} }
	}
	return m
}

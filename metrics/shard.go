package metrics

// ShardProvider hands sharding its instruments: a shard-filtered source
// (kube.SourceOptions.Shard) asks NewShardMetrics once, with its
// informer's name, and a group of replicas (package shard/replicas) asks
// NewReplicaMetrics once, with the group's name. It is separate from
// [Provider] because only sharded sources and replica groups report
// these; prometheus.Provider implements it too.
//
// Implementations must be safe for concurrent use.
type ShardProvider interface {
	NewShardMetrics(name string) ShardMetrics
	NewReplicaMetrics(group string) ReplicaMetrics
}

// ShardMetrics is the set of instruments of one shard-filtered source. Any
// field may be nil, meaning "not reported"; the zero value reports
// nothing.
type ShardMetrics struct {
	// ServerSide is set after every list to 1 when the server applied the
	// shard selector (its list said so), and to 0 when the source filters
	// on the client side instead: then every object still crosses the
	// wire and the source drops those outside the shard. It is also set to
	// 0 when a watch brings an object the server should have filtered.
	ServerSide Gauge
	// Dropped counts the objects, listed or watched, that the source
	// dropped because they are outside its shard.
	Dropped Counter
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m ShardMetrics) WithDefaults() ShardMetrics {
	orDiscard([]*Counter{&m.Dropped}, []*Gauge{&m.ServerSide}, nil)
	return m
}

// ReplicaMetrics is the set of instruments of one replica of a sharded
// group: what it owns and how its ownership moves. Any field may be nil,
// meaning "not reported"; the zero value reports nothing.
type ReplicaMetrics struct {
	// Members is set to the number of live members the replica sees,
	// itself included, whenever it changes.
	Members Gauge
	// RangesOwned is set to the number of the group's ranges this replica
	// owns (synced, not released), and ObjectsOwned to the number of
	// objects cached in them, whenever either changes.
	RangesOwned  Gauge
	ObjectsOwned Gauge
	// Acquired counts ranges this replica took over (synced, then
	// claimed), and Released those it gave up once their new owner had
	// claimed them (or because it stopped).
	Acquired Counter
	Released Counter
	// Convergence observes, in seconds, how long the replica took to own
	// exactly its share after the member set it sees changed: from the
	// change to the last claim or release it caused.
	Convergence Histogram
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m ReplicaMetrics) WithDefaults() ReplicaMetrics {
	orDiscard([]*Counter{&m.Acquired, &m.Released}, []*Gauge{&m.Members, &m.RangesOwned, &m.ObjectsOwned},
		[]*Histogram{&m.Convergence})
	return m
}

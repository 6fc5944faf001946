package metrics

// Nop is a provider that reports nothing: every method returns the empty
// set, whose nil instruments are not reported. It implements Provider,
// WorkqueueProvider and ShardProvider, so that a provider of a few
// instruments embeds it and writes only the methods it needs (see
// ExampleProvider); the zero Nop is ready.
type Nop struct{}

// Compile-time checks that Nop satisfies every provider interface.
var (
	_ Provider          = Nop{}
	_ WorkqueueProvider = Nop{}
	_ ShardProvider     = Nop{}
)

// NewReflectorMetrics returns the empty set.
func (Nop) NewReflectorMetrics(string) ReflectorMetrics { return ReflectorMetrics{} }

// NewInformerMetrics returns the empty set.
func (Nop) NewInformerMetrics(string) InformerMetrics { return InformerMetrics{} }

// NewHandlerMetrics returns the empty set.
func (Nop) NewHandlerMetrics(string, string) HandlerMetrics { return HandlerMetrics{} }

// NewWorkqueueMetrics returns the empty set.
func (Nop) NewWorkqueueMetrics(string, WorkqueueSampler) WorkqueueMetrics { return WorkqueueMetrics{} }

// NewShardMetrics returns the empty set.
func (Nop) NewShardMetrics(string) ShardMetrics { return ShardMetrics{} }

// NewReplicaMetrics returns the empty set.
func (Nop) NewReplicaMetrics(string) ReplicaMetrics { return ReplicaMetrics{} }

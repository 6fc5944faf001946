package metrics

// Provider hands the informer machinery its instruments. The same value is
// the Metrics option of reflector.Options, informer.Options and
// informer.ControllerOptions (and of a factory, which passes it on to its
// informers).
//
// Every reporting object asks once, when it is built, for the instruments
// of its own part of the vocabulary (listed in the package documentation),
// so that each quantity is reported by exactly one object:
//
//   - NewReflectorMetrics: a reflector's lists, watches, events, skipped
//     objects and back-off. An informer's reflector is named after the
//     informer.
//   - NewInformerMetrics: a shared informer's (or plain controller's) delta
//     queue and cache.
//   - NewHandlerMetrics: one handler registration's backlog, merges,
//     latency and panics, named by its informer and its own name.
//
// A method may leave any instrument of the set it returns nil: that one is
// not reported. Implementations must be safe for concurrent use, since
// reporting objects are built from any goroutine.
//
// Work queues have their own, separate provider, [WorkqueueProvider]: a
// queue belongs to the controller that makes it rather than to an
// informer, and is configured on its own (workqueue.Options.Metrics).
// prometheus.Provider implements both, so one value serves everything.
type Provider interface {
	NewReflectorMetrics(name string) ReflectorMetrics
	NewInformerMetrics(name string) InformerMetrics
	NewHandlerMetrics(informer, handler string) HandlerMetrics
}

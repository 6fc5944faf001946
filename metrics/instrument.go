// Package metrics defines what kinformer's packages report and leaves the
// choice of backend to the caller.
//
// Each reporting package has its own small provider interface, declared in
// its own file (the work queue's is [WorkqueueProvider] in workqueue.go). A
// provider is asked once per reporting object (one queue, one reflector) for
// a set of instruments, and the object then updates those instruments itself.
// A nil provider, and a nil instrument inside a returned set, both mean "do
// not report"; callers replace a nil instrument with [Discard], so a provider
// only fills in what it supports.
//
// The instruments are the three primitives below. They are deliberately
// smaller than any backend's types, so that a Prometheus, OpenTelemetry or
// test implementation is a few lines. Implementations must be safe for
// concurrent use and must not block: they are called on hot paths, sometimes
// with the reporting object's lock held.
//
// The Prometheus implementation lives in the prometheus sub-package.
package metrics

// Counter is a value that only goes up.
type Counter interface {
	// Inc adds one.
	Inc()
}

// Gauge is a value that goes up and down.
type Gauge interface {
	// Set replaces the value.
	Set(v float64)
}

// Histogram records a distribution of observed values, such as durations in
// seconds.
type Histogram interface {
	// Observe records one value.
	Observe(v float64)
}

// Discard is an instrument of every kind that records nothing. Its zero value
// is ready to use.
type Discard struct{}

// Inc does nothing.
func (Discard) Inc() {}

// Set does nothing.
func (Discard) Set(float64) {}

// Observe does nothing.
func (Discard) Observe(float64) {}

// Compile-time checks that Discard satisfies every instrument interface.
var (
	_ Counter   = Discard{}
	_ Gauge     = Discard{}
	_ Histogram = Discard{}
)

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

// orDiscard replaces every nil instrument in counters, gauges and
// histograms with Discard.
func orDiscard(counters []*Counter, gauges []*Gauge, histograms []*Histogram) {
	for _, c := range counters {
		if *c == nil {
			*c = Discard{}
		}
	}
	for _, g := range gauges {
		if *g == nil {
			*g = Discard{}
		}
	}
	for _, h := range histograms {
		if *h == nil {
			*h = Discard{}
		}
	}
}

package prometheus_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// series gathers reg into one value per series, keyed by the metric name
// and its labels in Prometheus' text form (`reflector_lists_total{mode="paged",name="pods"}`).
// A histogram's value is its sample count.
func series(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]float64)
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(labels)
			id := f.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Gauge != nil:
				out[id] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[id] = m.GetCounter().GetValue()
			case m.Histogram != nil:
				out[id] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// family returns the metric name of a series key.
func family(id string) string { return id[:strings.IndexByte(id, '{')] }

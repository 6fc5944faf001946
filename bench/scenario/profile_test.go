package scenario

import (
	"testing"
)

// BenchmarkScenario runs each scenario at full size on one side per
// sub-benchmark, for profiling one side alone:
//
//	go test ./scenario -run '^$' -bench 'Scenario/initial-sync/ours' -benchtime 3x -cpuprofile /tmp/cpu.prof
//
// The figures the project reports come from cmd/bench, which alternates
// the sides; this is only a handle for pprof.
func BenchmarkScenario(b *testing.B) {
	for _, s := range Matching(nil) {
		sides := s.Sides
		if sides == nil {
			sides = Sides
		}
		for _, side := range sides {
			b.Run(s.Name+"/"+string(side), func(b *testing.B) {
				for b.Loop() {
					r, err := s.Run(b.Context(), side, Full)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(r.Value, s.Unit)
				}
			})
		}
	}
}

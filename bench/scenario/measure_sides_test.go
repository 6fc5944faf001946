package scenario_test

import (
	"context"
	"testing"

	"github.com/kinformer/kinformer/bench/scenario"
)

// TestMeasureThirdSideGoesToDetail measures a scenario with a reference
// other than client-go and a third side: ours= and clientgo= are the first
// two, the third is in the detail with its CPU, each run's detail figures
// are summarized per side, and every side takes its turn at going first.
func TestMeasureThirdSideGoesToDetail(t *testing.T) {
	const ref, third scenario.Side = "ref", "third"
	var firsts []scenario.Side
	runs := 0
	s := scenario.Scenario{
		Name: "three", Unit: "ms", Target: scenario.Target{Op: scenario.AtMost, Value: 0.5},
		Sides: []scenario.Side{scenario.Ours, ref, third},
		Note:  "clientgo= is ref",
		Run: func(_ context.Context, side scenario.Side, _ scenario.Size) (scenario.Result, error) {
			if runs%3 == 0 {
				firsts = append(firsts, side)
			}
			runs++
			v := map[scenario.Side]float64{scenario.Ours: 1, ref: 4, third: 9}[side]
			return scenario.Result{Value: v, Digest: "same", Detail: map[string]float64{"p50_ms": v / 2}}, nil
		},
	}
	rep, err := scenario.Measure(t.Context(), s, scenario.Small, 3)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ours.Median != 1 || rep.ClientGo.Median != 4 || rep.Ratio != 0.25 || !rep.Met || rep.Note != s.Note {
		t.Fatalf("report %+v", rep)
	}
	if d := rep.Detail["third ms"]; d.Median != 9 || len(d.Runs) != 3 {
		t.Fatalf("third side's detail %+v", d)
	}
	if _, ok := rep.Detail["third cpu_seconds"]; !ok {
		t.Fatalf("no CPU of the third side in %v", rep.Detail)
	}
	if d := rep.Detail["ref p50_ms"]; d.Median != 2 {
		t.Fatalf("ref p50 %+v", d)
	}
	if want := []scenario.Side{scenario.Ours, ref, third}; len(firsts) != 3 || firsts[0] != want[0] || firsts[1] != want[1] || firsts[2] != want[2] {
		t.Fatalf("first sides of each run %v, want %v", firsts, want)
	}
}

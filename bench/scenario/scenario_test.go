package scenario_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"go.uber.org/goleak"

	"github.com/kinformer/kinformer/bench/scenario"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestScenariosRunOnBothSides runs every registered scenario once per side
// at the small size: both sides must succeed, agree on what they computed,
// and report a positive, finite value. No timing is asserted.
func TestScenariosRunOnBothSides(t *testing.T) {
	all := scenario.Matching(nil)
	if len(all) == 0 {
		t.Fatal("no scenarios registered")
	}
	for _, s := range all {
		t.Run(s.Name, func(t *testing.T) {
			rep, err := scenario.Measure(t.Context(), s, scenario.Small, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []float64{rep.Ours.Median, rep.ClientGo.Median, rep.Ratio} {
				if !(v > 0) || math.IsInf(v, 0) {
					t.Fatalf("implausible figure %v in %+v", v, rep)
				}
			}
		})
	}
}

func TestMeasureRejectsDisagreeingSides(t *testing.T) {
	s := scenario.Scenario{
		Name: "disagree", Unit: "x", Target: scenario.Target{Op: scenario.AtLeast, Value: 1},
		Run: func(_ context.Context, side scenario.Side, _ scenario.Size) (scenario.Result, error) {
			return scenario.Result{Value: 1, Digest: string(side)}, nil
		},
	}
	if _, err := scenario.Measure(t.Context(), s, scenario.Small, 1); !errors.Is(err, scenario.ErrMismatch) {
		t.Fatalf("Measure = %v, want ErrMismatch", err)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		in            []float64
		min, med, max float64
	}{
		{[]float64{3}, 3, 3, 3},
		{[]float64{5, 1, 3}, 1, 3, 5},
		{[]float64{4, 1, 3, 2}, 1, 2.5, 4},
	}
	for _, tt := range tests {
		s := scenario.Summarize(tt.in)
		if s.Min != tt.min || s.Median != tt.med || s.Max != tt.max {
			t.Errorf("Summarize(%v) = %+v, want %v/%v/%v", tt.in, s, tt.min, tt.med, tt.max)
		}
	}
}

func TestTarget(t *testing.T) {
	tests := []struct {
		t     scenario.Target
		ratio float64
		met   bool
	}{
		{scenario.Target{Op: scenario.AtLeast, Value: 1.5}, 1.5, true},
		{scenario.Target{Op: scenario.AtLeast, Value: 1.5}, 1.4, false},
		{scenario.Target{Op: scenario.AtMost, Value: 0.5}, 0.4, true},
		{scenario.Target{Op: scenario.AtMost, Value: 0.5}, 0.6, false},
	}
	for _, tt := range tests {
		if got := tt.t.Met(tt.ratio); got != tt.met {
			t.Errorf("%v.Met(%v) = %v, want %v", tt.t, tt.ratio, got, tt.met)
		}
	}
}

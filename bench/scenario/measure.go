package scenario

import (
	"context"
	"fmt"
	"runtime"
	"slices"
)

// Summary is the spread of one side's measurements.
type Summary struct {
	Min    float64   `json:"min"`
	Median float64   `json:"median"`
	Max    float64   `json:"max"`
	Runs   []float64 `json:"runs"`
}

// Summarize returns the spread of values, which must not be empty. The
// median of an even count is the mean of the middle two.
func Summarize(values []float64) Summary {
	s := slices.Clone(values)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Summary{Min: s[0], Median: med, Max: s[n-1], Runs: slices.Clone(values)}
}

// Report is the outcome of measuring one scenario.
type Report struct {
	Name     string  `json:"name"`
	Unit     string  `json:"unit"`
	Target   string  `json:"target"`
	Ours     Summary `json:"ours"`
	ClientGo Summary `json:"clientgo"`
	// Ratio is Ours.Median / ClientGo.Median.
	Ratio float64 `json:"ratio"`
	Met   bool    `json:"met"`
	// OursCPU and ClientGoCPU are the CPU seconds (user + system, whole
	// process) each run used, and CPURatio the ratio of their medians.
	// On a loaded machine wall-clock figures swing with the scheduler;
	// CPU time shows how much work each side did, which is steadier.
	OursCPU     Summary `json:"ours_cpu_seconds"`
	ClientGoCPU Summary `json:"clientgo_cpu_seconds"`
	CPURatio    float64 `json:"cpu_ratio"`
	// Detail holds further figures behind a line, by name, for example
	// the steady and peak memory behind a relist-peak ratio.
	Detail map[string]Summary `json:"detail,omitempty"`
	// Note says what ours= and clientgo= are when they are not kinformer
	// and client-go, or how Ratio is computed when it is not
	// Ours.Median / ClientGo.Median.
	Note string `json:"note,omitempty"`
}

// Measure runs s count times per side, rotating which side goes first so
// that drift in machine load hits every side equally (with two sides:
// alternating), and checks that every run of every side produced the same
// digest. It collects garbage before each run so one run's garbage is not
// charged to the next.
func Measure(ctx context.Context, s Scenario, size Size, count int) (Report, error) {
	if count < 1 {
		return Report{}, fmt.Errorf("%s: count %d, want at least 1", s.Name, count)
	}
	sides := s.Sides
	if sides == nil {
		sides = Sides
	}
	values := map[Side][]float64{}
	cpu := map[Side][]float64{}
	detail := map[string][]float64{}
	var digest string
	for i := range count {
		order := append(slices.Clone(sides[i%len(sides):]), sides[:i%len(sides)]...)
		for _, side := range order {
			if err := ctx.Err(); err != nil {
				return Report{}, err
			}
			runtime.GC()
			cpuBefore := processCPU()
			r, err := s.Run(ctx, side, size)
			used := processCPU() - cpuBefore
			if r.CPU > 0 {
				used = r.CPU
			}
			cpu[side] = append(cpu[side], used.Seconds())
			if err != nil {
				return Report{}, fmt.Errorf("%s (%s, run %d): %w", s.Name, side, i+1, err)
			}
			if digest == "" {
				digest = r.Digest
			} else if r.Digest != digest {
				return Report{}, fmt.Errorf("%s (%s, run %d): %w: digest %q, earlier runs %q",
					s.Name, side, i+1, ErrMismatch, r.Digest, digest)
			}
			values[side] = append(values[side], r.Value)
			for name, v := range r.Detail {
				key := string(side) + " " + name
				detail[key] = append(detail[key], v)
			}
		}
	}
	ours, ref := sides[0], sides[1]
	rep := Report{
		Name:     s.Name,
		Unit:     s.Unit,
		Target:   s.Target.String(),
		Ours:     Summarize(values[ours]),
		ClientGo: Summarize(values[ref]),
		Note:     s.Note,
	}
	rep.Ratio = rep.Ours.Median / rep.ClientGo.Median
	rep.Met = s.Target.Met(rep.Ratio)
	rep.OursCPU = Summarize(cpu[ours])
	rep.ClientGoCPU = Summarize(cpu[ref])
	if rep.ClientGoCPU.Median > 0 {
		rep.CPURatio = rep.OursCPU.Median / rep.ClientGoCPU.Median
	}
	for _, side := range sides[2:] {
		detail[string(side)+" "+s.Unit] = values[side]
		detail[string(side)+" cpu_seconds"] = cpu[side]
	}
	for name, vs := range detail {
		if rep.Detail == nil {
			rep.Detail = map[string]Summary{}
		}
		rep.Detail[name] = Summarize(vs)
	}
	return rep, nil
}

// ErrMismatch reports that the two sides (or two runs) of a scenario did
// different work, so their timings cannot be compared.
var ErrMismatch = fmt.Errorf("sides disagree")

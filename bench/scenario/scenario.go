// Package scenario is the framework of kinformer's side-by-side benchmarks:
// a Scenario runs one workload through either kinformer or client-go, a
// registry holds every scenario, and Measure runs a scenario several times,
// alternating sides, and summarizes the results.
//
// Each workload lives in its own file and registers itself from an init
// function, so adding a scenario is adding a file.
package scenario

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"
)

// Side names the implementation a run uses.
type Side string

const (
	Ours     Side = "ours"
	ClientGo Side = "clientgo"
)

// Sides lists both sides, ours first.
var Sides = []Side{Ours, ClientGo}

// Size scales a workload. Small runs in well under a second and is what
// tests use; Full is what the benchmark command reports.
type Size int

const (
	Small Size = iota
	Full
)

// Op compares a ratio with a target value.
type Op string

const (
	AtMost  Op = "<="
	AtLeast Op = ">="
)

// Target is the ratio ours/clientgo a scenario aims for.
type Target struct {
	Op    Op
	Value float64
}

// Met reports whether ratio meets the target.
func (t Target) Met(ratio float64) bool {
	if t.Op == AtMost {
		return ratio <= t.Value
	}
	return ratio >= t.Value
}

func (t Target) String() string { return fmt.Sprintf("%s%g", t.Op, t.Value) }

// Result is what one run of a workload produced.
type Result struct {
	// Value is the measurement, in the scenario's Unit.
	Value float64
	// Digest summarizes what the workload computed (for example which
	// items were processed how often). Both sides must produce the same
	// digest, or the comparison is void.
	Digest string
	// CPU is the process CPU time the measured part of the run used
	// (see CPUTimer). Zero means Measure charges the whole run, setup and
	// checks included.
	CPU time.Duration
	// Detail holds further figures of the run by name (for example the
	// CPU per item, or a median beside a p99 Value); Measure reports each
	// as Report.Detail["<side> <name>"].
	Detail map[string]float64
}

// Scenario is one workload, runnable on either side.
type Scenario struct {
	// Name identifies the scenario; -run matches it.
	Name string
	// Unit of Result.Value, for example "items/s" or "ms".
	Unit string
	// Target is the ratio ours/clientgo the scenario aims for.
	Target Target
	// Sides are the sides Measure runs, in turn. Nil means Sides (Ours,
	// ClientGo). The first is reported as ours=, the second as clientgo=
	// (the reference the ratio divides by; say which in Note when it is
	// not client-go), any others in Report.Detail under their name.
	Sides []Side
	// Note is copied to Report.Note.
	Note string
	// Run runs the workload once on side at size. It must return only
	// after every goroutine it started has exited.
	Run func(ctx context.Context, side Side, size Size) (Result, error)
}

var (
	// registryMu guards registry.
	registryMu sync.Mutex
	registry   []Scenario
)

// Register adds s to the registry. It panics if the name is taken, since
// that is a programming error found at start-up.
func Register(s Scenario) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, r := range registry {
		if r.Name == s.Name {
			panic("scenario: duplicate name " + s.Name)
		}
	}
	registry = append(registry, s)
}

// Matching returns the registered scenarios whose name matches re (all of
// them if re is nil), sorted by name.
func Matching(re *regexp.Regexp) []Scenario {
	registryMu.Lock()
	defer registryMu.Unlock()
	var out []Scenario
	for _, s := range registry {
		if re == nil || re.MatchString(s.Name) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Scenario) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Command bench runs kinformer's side-by-side benchmarks against client-go
// and prints, per scenario, the median of each side, their ratio and the
// target, followed by min/median/max per side. It writes every figure as
// JSON too.
//
//	go run ./cmd/bench [-run REGEXP] [-count N] [-json FILE] [-cpuprofile FILE]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/kinformer/kinformer/bench/scenario"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		pattern = flag.String("run", "", "run only the scenarios whose name matches this regular expression")
		count   = flag.Int("count", 5, "runs per side, alternating which side goes first")
		out     = flag.String("json", "results/latest.json", "write the results as JSON here (empty: do not write)")
		profile = flag.String("cpuprofile", "", "write a CPU profile of the whole run here")
	)
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var re *regexp.Regexp
	if *pattern != "" {
		var err error
		if re, err = regexp.Compile(*pattern); err != nil {
			return fmt.Errorf("-run: %w", err)
		}
	}
	scenarios := scenario.Matching(re)
	if len(scenarios) == 0 {
		return errors.New("no scenario matches -run")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	results := struct {
		Time      time.Time         `json:"time"`
		Count     int               `json:"count"`
		Scenarios []scenario.Report `json:"scenarios"`
	}{Time: time.Now().UTC(), Count: *count}
	var failed error
	for _, s := range scenarios {
		rep, err := scenario.Measure(ctx, s, scenario.Full, *count)
		if err != nil {
			failed = errors.Join(failed, err)
			fmt.Printf("%s FAILED: %v\n", s.Name, err)
			continue
		}
		results.Scenarios = append(results.Scenarios, rep)
		printReport(rep)
	}
	if *out != "" {
		if err := writeJSON(*out, results); err != nil {
			return errors.Join(failed, err)
		}
	}
	return failed
}

func printReport(r scenario.Report) {
	verdict := "met"
	if !r.Met {
		verdict = "MISSED"
	}
	fmt.Printf("%s ours=%s%s clientgo=%s%s ratio=%.2f target=%s %s\n",
		r.Name, num(r.Ours.Median), r.Unit, num(r.ClientGo.Median), r.Unit, r.Ratio, r.Target, verdict)
	for _, side := range []struct {
		name string
		s    scenario.Summary
	}{{"ours", r.Ours}, {"clientgo", r.ClientGo}} {
		fmt.Printf("  %-8s min=%s median=%s max=%s %s (n=%d)\n",
			side.name, num(side.s.Min), num(side.s.Median), num(side.s.Max), r.Unit, len(side.s.Runs))
	}
	fmt.Printf("  cpu      ours=%.3gs clientgo=%.3gs ratio=%.2f (medians of CPU seconds per run; lower is less work)\n",
		r.OursCPU.Median, r.ClientGoCPU.Median, r.CPURatio)
	for _, name := range slices.Sorted(maps.Keys(r.Detail)) {
		d := r.Detail[name]
		fmt.Printf("  %s min=%s median=%s max=%s\n", name, num(d.Min), num(d.Median), num(d.Max))
	}
	if r.Note != "" {
		fmt.Printf("  (%s)\n", r.Note)
	}
}

// num prints v with three significant digits and no exponent for the usual
// magnitudes.
func num(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

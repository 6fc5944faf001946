package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kinformer/kinformer/bench/scenario"
)

// The flags of -million (scenario.RunMillion), which make bench-million
// runs.
var (
	million  = flag.Bool("million", false, "run the million scenario instead, on objects of -million-kind (-pods defaults to 1000000, -count to 3 then)")
	curve    = flag.String("million-curve", "10000,100000", "with -million: the smaller sizes measured on the way up, comma-separated (empty: none)")
	curveN   = flag.Int("million-curve-count", 1, "with -million: runs per side at each -million-curve size")
	capMB    = flag.Int("cap-mb", scenario.DefaultMillionCapMB, "with -million: the RSS in MB at which a side that cannot hold every object is stopped")
	noWarm   = flag.Bool("million-no-warm", false, "with -million: leave out warm-restart-view-fresh-time")
	warmCold = flag.Int("million-warm-cold-count", 1, "with -million: cold runs of warm-restart-view-fresh-time (its fresh restarts run -count times)")
	sides    = flag.String("million-sides", "", "with -million: run only these sides, comma-separated (floor, view, metadata, full, clientgo, clientgo-nomf; empty: all); lines needing a side left out are left out, million-rss-view is then against its bound")
	kind     = flag.String("million-kind", "replicasets", "with -million: the objects, replicasets or pods (a million pods need about 33 GiB: the kube-apiserver keeps every pod itself)")
)

// runMillion runs -million; pods and count are taken only when given on
// the command line.
func runMillion(ctx context.Context, pods, count int, settle time.Duration, profileDir, out string, say func(string, ...any)) error {
	given := func(name string) bool {
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
		return set
	}
	n, c := 1_000_000, 0
	if given("pods") {
		n = pods
	}
	if given("count") {
		c = count
	}
	sizes := []int{}
	for f := range strings.SplitSeq(*curve, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return fmt.Errorf("-million-curve %q: want positive object counts", *curve)
		}
		sizes = append(sizes, v)
	}
	var only []string
	for f := range strings.SplitSeq(*sides, ",") {
		if f = strings.TrimSpace(f); f != "" {
			only = append(only, f)
		}
	}
	start := time.Now()
	reports, err := scenario.RunMillion(ctx, scenario.MillionOptions{
		Pods: n, CurveSizes: sizes, Count: c, CurveCount: *curveN, CapMB: *capMB, Settle: settle, SkipWarm: *noWarm, WarmColdCount: *warmCold, Kind: *kind,
		Sides: only, ProfileDir: profileDir, Progress: say,
	})
	if err != nil {
		return err
	}
	printReports(reports)
	say("-million took %v", time.Since(start).Round(time.Second))
	return writeJSONOf(out, n, *kind, reports)
}

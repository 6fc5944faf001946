// Command controlplane runs scenario 7: kinformer and client-go each sync
// the same pods from a real local kube-apiserver (testenv), in separate
// processes, runs alternating, and prints the sync time and peak RSS of
// each side (median, then min/median/max) with their ratio and target. It
// is separate from cmd/bench because it needs a control plane (built from
// source on first use, many minutes) and minutes of pod creation.
//
// A second pair follows, the kinformer command against the library for the
// same data: `kinformer get pods -A -o name` (the built binary) against the
// library's metadata informer sync; its lines read ours= for the command and
// clientgo= for the library. -cli-only runs that pair alone.
//
//	go run ./cmd/controlplane [-pods 20000] [-count 5] [-cli-only] [-json results/controlplane.json]
//
// -shard runs the sharding scenarios instead, shard-rss and
// shard-converge, on a control plane with the ShardedListAndWatch feature
// gate on (-shard-client-side: off); see scenario.RunShard.
//
// -warm-restart runs the warm-restart scenario instead (a restart from a
// fresh checkpoint, and from one older than etcd's compaction, against a
// cold start; see scenario.RunWarmRestart) on a control plane of its own.
//
// -memory runs the memory scenarios of issue 13 instead (the floor,
// heap per pod, CPU of a projected sync, the peak of a forced relist; see
// scenario.RunMemory), on control planes of their own. -scale measures the
// memory figures at 10,000, 50,000 and 100,000 pods (-scale-sizes; see
// scenario.RunScale), which make bench-scale runs.
//
// -cli-100k runs the command against kubectl instead, which make bench-cli
// runs: `get pods -A` as names, a table and JSON, each side a process,
// at 100,000 pods seeded into etcd (see scenario.RunCLI100k); -kubectl
// names the kubectl binary.
//
// -outage runs the outage-recovery scenario of issue 22 instead (see
// scenario.RunOutage), which make bench-outage runs: per run, a kinformer
// child (one kube.Factory, ten namespaced ConfigMap informers) and a
// client-go child (ten namespaced SharedInformerFactory on one clientset)
// sync at once; the apiserver is stopped for -outage-length (default 60s)
// and started again, and each child reports how long after the
// apiserver's readiness its last informer was watching again, its CPU
// time, and its requests in the first second after readiness. -count
// defaults to 3 then; a run takes about -outage-length plus 45 s.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kinformer/kinformer/bench/scenario"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// A child run (the binary re-executed for one side) does only that.
	if child, err := scenario.RunChild(ctx); child {
		if err != nil {
			fmt.Fprintln(os.Stderr, "controlplane child:", err)
			os.Exit(1)
		}
		return
	}
	if child, err := scenario.RunShardChild(ctx); child {
		if err != nil {
			fmt.Fprintln(os.Stderr, "controlplane shard child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "controlplane:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	var (
		pods    = flag.Int("pods", 20_000, "pods to create and sync (with -million: objects of -million-kind)")
		count   = flag.Int("count", 5, "runs per side, alternating which side goes first")
		out     = flag.String("json", "results/controlplane.json", "write the results as JSON here (empty: do not write)")
		kcfg    = flag.String("kubeconfig", "", "use this running cluster instead of starting a control plane")
		keep    = flag.Bool("keep", false, "after the runs, keep the control plane until interrupted (print its kubeconfig)")
		prof    = flag.String("profile", "", "make each child write cpu-SIDE.prof and heap-SIDE.prof in this directory (with -million: allocs-SIDE-sync.prof and, after a relist, allocs-SIDE-relist.prof)")
		settle  = flag.Duration("settle", scenario.DefaultSettle, "pause before each run, so the server has finished with the previous one (negative: none)")
		cliOnly = flag.Bool("cli-only", false, "run only the second pair: `kinformer get pods -A -o name` against the library's metadata informer")
		// Sharding scenarios (scenario.RunShard).
		shardRun   = flag.Bool("shard", false, "run the sharding scenarios shard-rss and shard-converge instead (-count defaults to 3 then)")
		shardNoSrv = flag.Bool("shard-client-side", false, "with -shard: the feature gate off, sources filter on the client side")
		warm       = flag.Bool("warm-restart", false, "run the warm-restart scenario instead (checkpoints: fresh and expired against cold)")
		memory     = flag.Bool("memory", false, "run the memory scenarios instead: sync-floor, sync-vs-floor, heap-per-pod, sync-cpu-projected, relist-peak")
		memOnly    = flag.String("memory-only", "", "with -memory: run only the sync half (sync) or the relist half (relist)")
		scale      = flag.Bool("scale", false, "run the memory figures at several sizes instead (-scale-sizes; -count defaults to 3 then)")
		scaleSizes = flag.String("scale-sizes", "10000,50000,100000", "with -scale: the pod counts, comma-separated")
		outage     = flag.Bool("outage", false, "run the outage-recovery scenario instead: ten informers per side, the apiserver stopped for -outage-length (-count defaults to 3 then)")
		outageLen  = flag.Duration("outage-length", scenario.DefaultOutageLength, "with -outage: how long the apiserver stays down")
	)
	flag.Parse()
	// dest is -json when given, def otherwise.
	dest := func(def string) string {
		d := def
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "json" {
				d = *out
			}
		})
		return d
	}
	say := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "controlplane: "+format+"\n", args...) }
	if *cli100k {
		return runCLI100k(ctx, *pods, *count, *settle, *keep, dest("results/cli-100k.json"), say) // cli100k.go
	}
	if *million {
		return runMillion(ctx, *pods, *count, *settle, *prof, dest("results/controlplane-million.json"), say)
	}
	if *outage {
		n := 0
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "count" {
				n = *count
			}
		})
		start := time.Now()
		reports, err := scenario.RunOutage(ctx, scenario.OutageOptions{Count: n, Outage: *outageLen, Settle: *settle, Progress: say})
		if err != nil {
			return err
		}
		printReports(reports)
		say("-outage took %v", time.Since(start).Round(time.Second))
		return writeJSON(dest("results/controlplane-outage.json"), 0, reports)
	}
	if *scale {
		var sizes []int
		for f := range strings.SplitSeq(*scaleSizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				return fmt.Errorf("-scale-sizes %q: want positive pod counts", *scaleSizes)
			}
			sizes = append(sizes, n)
		}
		n := 0
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "count" {
				n = *count
			}
		})
		start := time.Now()
		reports, err := scenario.RunScale(ctx, scenario.ScaleOptions{Sizes: sizes, Count: n, Settle: *settle, Progress: say})
		if err != nil {
			return err
		}
		printReports(reports)
		say("-scale took %v", time.Since(start).Round(time.Second))
		return writeJSON(dest("results/controlplane-scale.json"), slices.Max(sizes), reports)
	}
	if *memory {
		if *memOnly != "" && *memOnly != "sync" && *memOnly != "relist" {
			return fmt.Errorf("-memory-only %q: want sync or relist", *memOnly)
		}
		reports, err := scenario.RunMemory(ctx, scenario.MemoryOptions{
			Pods: *pods, Count: *count, Settle: *settle, Kubeconfig: *kcfg,
			SkipSync: *memOnly == "relist", SkipRelist: *memOnly == "sync", Progress: say,
		})
		if err != nil {
			return err
		}
		printReports(reports)
		return writeJSON(dest("results/controlplane-memory.json"), *pods, reports)
	}
	if *warm {
		reports, err := scenario.RunWarmRestart(ctx, scenario.WarmRestartOptions{
			Pods: *pods, Count: *count, Settle: *settle, Progress: say,
		})
		if err != nil {
			return err
		}
		printReports(reports)
		return writeJSON(dest("results/controlplane-warm.json"), *pods, reports)
	}
	if *shardRun {
		n := 0
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "count" {
				n = *count
			}
		})
		reports, err := scenario.RunShard(ctx, scenario.ShardOptions{
			Pods: *pods, Count: n, Kubeconfig: *kcfg, ClientSide: *shardNoSrv, Settle: *settle, Progress: say,
		})
		if err != nil {
			return err
		}
		printReports(reports)
		return writeJSON(dest("results/controlplane-shard.json"), *pods, reports)
	}
	reports, err := scenario.RunControlPlane(ctx, scenario.ControlPlaneOptions{
		Pods:       *pods,
		Count:      *count,
		Kubeconfig: *kcfg,
		ProfileDir: *prof,
		Settle:     *settle,
		OnlyCLI:    *cliOnly,
		Keep: func(kubeconfig string) {
			if !*keep {
				return
			}
			fmt.Fprintf(os.Stderr, "controlplane: kept running until interrupted; reuse it with -kubeconfig %s\n", kubeconfig)
			<-ctx.Done()
		},
		Progress: say,
	})
	if err != nil {
		return err
	}
	printReports(reports)
	return writeJSON(*out, *pods, reports)
}

func printReports(reports []scenario.Report) {
	for _, r := range reports {
		verdict, target := "met", r.Target
		switch {
		case target == "":
			verdict, target = "(no target)", "none"
		case !r.Met:
			verdict = "MISSED"
		}
		fmt.Printf("%s ours=%s%s clientgo=%s%s ratio=%.2f target=%s %s\n",
			r.Name, num(r.Ours.Median), r.Unit, num(r.ClientGo.Median), r.Unit, r.Ratio, target, verdict)
		if r.Note != "" {
			fmt.Printf("  (%s)\n", r.Note)
		}
		fmt.Printf("  ours     min=%s median=%s max=%s %s (n=%d)\n", num(r.Ours.Min), num(r.Ours.Median), num(r.Ours.Max), r.Unit, len(r.Ours.Runs))
		fmt.Printf("  clientgo min=%s median=%s max=%s %s (n=%d)\n", num(r.ClientGo.Min), num(r.ClientGo.Median), num(r.ClientGo.Max), r.Unit, len(r.ClientGo.Runs))
		if r.CPURatio != 0 {
			fmt.Printf("  cpu      ours=%.3gs clientgo=%.3gs ratio=%.2f (medians of CPU seconds per run)\n", r.OursCPU.Median, r.ClientGoCPU.Median, r.CPURatio)
		}
		for _, name := range slices.Sorted(maps.Keys(r.Detail)) {
			d := r.Detail[name]
			fmt.Printf("  %-22s min=%s median=%s max=%s\n", name, num(d.Min), num(d.Median), num(d.Max))
		}
	}
}

// num formats a figure with four significant digits, or as an integer
// from 10,000 on (never in exponent form).
func num(v float64) string {
	if v >= 1e4 || v <= -1e4 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// writeJSON writes the reports to out; nothing when out is empty.
func writeJSON(out string, pods int, reports []scenario.Report) error {
	return writeJSONOf(out, pods, "", reports)
}

// writeJSONOf is writeJSON of a run on objects of kind (a resource, such
// as "replicasets"), which the file names; pods is then their number.
func writeJSONOf(out string, pods int, kind string, reports []scenario.Report) error {
	if out == "" {
		return nil
	}
	b, err := json.MarshalIndent(struct {
		Time      time.Time         `json:"time"`
		Pods      int               `json:"pods"`
		Kind      string            `json:"kind,omitempty"`
		Scenarios []scenario.Report `json:"scenarios"`
	}{time.Now().UTC(), pods, kind, reports}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}

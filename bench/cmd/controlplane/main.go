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
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
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
		pods    = flag.Int("pods", 20_000, "pods to create and sync")
		count   = flag.Int("count", 5, "runs per side, alternating which side goes first")
		out     = flag.String("json", "results/controlplane.json", "write the results as JSON here (empty: do not write)")
		kcfg    = flag.String("kubeconfig", "", "use this running cluster instead of starting a control plane")
		keep    = flag.Bool("keep", false, "after the runs, keep the control plane until interrupted (print its kubeconfig)")
		prof    = flag.String("profile", "", "make each child write cpu-SIDE.prof and heap-SIDE.prof in this directory")
		settle  = flag.Duration("settle", scenario.DefaultSettle, "pause before each run, so the server has finished with the previous one (negative: none)")
		cliOnly = flag.Bool("cli-only", false, "run only the second pair: `kinformer get pods -A -o name` against the library's metadata informer")
		// Sharding scenarios (scenario.RunShard).
		shardRun   = flag.Bool("shard", false, "run the sharding scenarios shard-rss and shard-converge instead (-count defaults to 3 then)")
		shardNoSrv = flag.Bool("shard-client-side", false, "with -shard: the feature gate off, sources filter on the client side")
		warm       = flag.Bool("warm-restart", false, "run the warm-restart scenario instead (checkpoints: fresh and expired against cold)")
	)
	flag.Parse()
	if *warm {
		dest := "results/controlplane-warm.json"
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "json" {
				dest = *out
			}
		})
		reports, err := scenario.RunWarmRestart(ctx, scenario.WarmRestartOptions{
			Pods: *pods, Count: *count, Settle: *settle,
			Progress: func(format string, args ...any) { fmt.Fprintf(os.Stderr, "controlplane: "+format+"\n", args...) },
		})
		if err != nil {
			return err
		}
		printReports(reports)
		if dest == "" {
			return nil
		}
		return writeJSON(dest, *pods, reports)
	}
	if *shardRun {
		n, dest := 0, "results/controlplane-shard.json"
		flag.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "count":
				n = *count
			case "json":
				dest = *out
			}
		})
		reports, err := scenario.RunShard(ctx, scenario.ShardOptions{
			Pods: *pods, Count: n, Kubeconfig: *kcfg, ClientSide: *shardNoSrv, Settle: *settle,
			Progress: func(format string, args ...any) { fmt.Fprintf(os.Stderr, "controlplane: "+format+"\n", args...) },
		})
		if err != nil {
			return err
		}
		printReports(reports)
		if dest == "" {
			return nil
		}
		return writeJSON(dest, *pods, reports)
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
		Progress: func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "controlplane: "+format+"\n", args...)
		},
	})
	if err != nil {
		return err
	}
	printReports(reports)
	if *out == "" {
		return nil
	}
	return writeJSON(*out, *pods, reports)
}

func printReports(reports []scenario.Report) {
	for _, r := range reports {
		verdict := "met"
		if !r.Met {
			verdict = "MISSED"
		}
		fmt.Printf("%s ours=%.4g%s clientgo=%.4g%s ratio=%.2f target=%s %s\n",
			r.Name, r.Ours.Median, r.Unit, r.ClientGo.Median, r.Unit, r.Ratio, r.Target, verdict)
		fmt.Printf("  ours     min=%.4g median=%.4g max=%.4g %s (n=%d)\n", r.Ours.Min, r.Ours.Median, r.Ours.Max, r.Unit, len(r.Ours.Runs))
		fmt.Printf("  clientgo min=%.4g median=%.4g max=%.4g %s (n=%d)\n", r.ClientGo.Min, r.ClientGo.Median, r.ClientGo.Max, r.Unit, len(r.ClientGo.Runs))
		if r.CPURatio != 0 {
			fmt.Printf("  cpu      ours=%.3gs clientgo=%.3gs ratio=%.2f (medians of CPU seconds per run)\n", r.OursCPU.Median, r.ClientGoCPU.Median, r.CPURatio)
		}
	}
}

func writeJSON(out string, pods int, reports []scenario.Report) error {
	b, err := json.MarshalIndent(struct {
		Time      time.Time         `json:"time"`
		Pods      int               `json:"pods"`
		Scenarios []scenario.Report `json:"scenarios"`
	}{time.Now().UTC(), pods, reports}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}

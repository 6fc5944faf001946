package main

import (
	"context"
	"flag"
	"strings"
	"time"

	"github.com/kinformer/kinformer/bench/scenario"
)

// The flags of -cli-100k (scenario.RunCLI100k), which make bench-cli runs.
var (
	cli100k    = flag.Bool("cli-100k", false, "run the command against kubectl instead: get pods -A as names, table and JSON at -pods (default 100,000 then; -count defaults to 3)")
	kubectlBin = flag.String("kubectl", "", "with -cli-100k: the kubectl binary (make bench-cli builds bin/kubectl)")
	cliOutputs = flag.String("cli-outputs", "name,table,json", "with -cli-100k: the outputs to measure, comma-separated (none: only seed the cluster, for -keep)")
	cliTimeout = flag.Duration("cli-timeout", 15*time.Minute, "with -cli-100k: kill a run after this long and report what it reached")
)

// runCLI100k runs the command against kubectl; pods and count apply when
// given on the command line, else RunCLI100k's defaults.
func runCLI100k(ctx context.Context, pods, count int, settle time.Duration, keep bool, out string, say func(string, ...any)) error {
	n, c := 0, 0
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "pods":
			n = pods
		case "count":
			c = count
		}
	})
	start := time.Now()
	reports, err := scenario.RunCLI100k(ctx, scenario.CLI100kOptions{Pods: n, Count: c, Kubectl: *kubectlBin,
		Timeout: *cliTimeout, Outputs: strings.Split(*cliOutputs, ","), Settle: settle, Progress: say,
		Keep: func(kubeconfig string) {
			if !keep {
				return
			}
			say("kept running until interrupted: export KUBECONFIG=%s", kubeconfig)
			<-ctx.Done()
		}})
	if err != nil {
		return err
	}
	printReports(reports)
	say("-cli-100k took %v", time.Since(start).Round(time.Second))
	return writeJSON(out, max(n, 100_000), reports)
}

// Command baseline prints process-baseline-rss: the resident set of a
// process that imports kube and makes an idle factory (./ours) against
// that of a process making an idle client-go shared informer factory
// (./clientgo), each built as its own binary (so neither carries the
// other's packages) and run --count times, alternating which goes first.
// No server is needed: neither factory has an informer.
//
//	cd bench && go run ./cmd/baseline -count 5
//
// The line is ratio=ours/clientgo of the median VmRSS, target <= 0.5;
// below it, the file-backed and anonymous parts, the Go heap and the
// binary sizes, each min/median/max.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/kinformer/kinformer/bench/cmd/baseline/idle"
	"github.com/kinformer/kinformer/bench/scenario"
)

func main() {
	count := flag.Int("count", 5, "runs per side")
	flag.Parse()
	if err := run(context.Background(), *count); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, count int) error {
	if count < 1 {
		return fmt.Errorf("-count %d, want at least 1", count)
	}
	dir, err := os.MkdirTemp("", "kinformer-baseline-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sides := []string{"ours", "clientgo"}
	for _, side := range sides {
		fmt.Fprintf(os.Stderr, "baseline: building ./cmd/baseline/%s\n", side)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, side), "./cmd/baseline/"+side)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", side, err)
		}
	}
	runs := map[string][]idle.Result{}
	for i := range count {
		order := sides
		if i%2 == 1 {
			order = []string{sides[1], sides[0]}
		}
		for _, side := range order {
			out, err := exec.CommandContext(ctx, filepath.Join(dir, side)).Output()
			if err != nil {
				return fmt.Errorf("run %s: %w", side, err)
			}
			var r idle.Result
			if err := json.NewDecoder(bytes.NewReader(out)).Decode(&r); err != nil {
				return fmt.Errorf("run %s: %w", side, err)
			}
			fmt.Fprintf(os.Stderr, "baseline: run %d %-8s RSS %6.1f MB (file %5.1f, anon %5.1f), heap %5.1f MB\n",
				i+1, side, mb(r.RSSKB), mb(r.RSSFileKB), mb(r.RSSAnonKB), float64(r.HeapBytes)/(1<<20))
			runs[side] = append(runs[side], r)
		}
	}
	figure := func(side string, of func(idle.Result) float64) scenario.Summary {
		v := make([]float64, len(runs[side]))
		for i, r := range runs[side] {
			v[i] = of(r)
		}
		return scenario.Summarize(v)
	}
	rss := func(r idle.Result) float64 { return mb(r.RSSKB) }
	ours, cg := figure("ours", rss), figure("clientgo", rss)
	ratio := ours.Median / cg.Median
	verdict := "met"
	if ratio > 0.5 {
		verdict = "MISSED"
	}
	fmt.Printf("process-baseline-rss ours=%sMB clientgo=%sMB ratio=%.2f target=<=0.5 %s\n", num(ours.Median), num(cg.Median), ratio, verdict)
	fmt.Printf("  (an idle kube.Factory against an idle client-go SharedInformerFactory, each its own binary, after init and one GC)\n")
	for _, row := range []struct {
		name string
		of   func(idle.Result) float64
	}{
		{"rss-mb", rss},
		{"rss-file-mb", func(r idle.Result) float64 { return mb(r.RSSFileKB) }},
		{"rss-anon-mb", func(r idle.Result) float64 { return mb(r.RSSAnonKB) }},
		{"heap-mb", func(r idle.Result) float64 { return float64(r.HeapBytes) / (1 << 20) }},
		{"binary-mb", func(r idle.Result) float64 { return float64(r.BinaryByte) / (1 << 20) }},
	} {
		for _, side := range sides {
			s := figure(side, row.of)
			fmt.Printf("  %-12s %-8s min=%s median=%s max=%s (n=%d)\n", row.name, side, num(s.Min), num(s.Median), num(s.Max), len(s.Runs))
		}
	}
	return nil
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

package scenario

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/kinformer/kinformer/testenv"
)

// The command at 100,000 pods (issue 26): `kinformer get pods -A` against
// `kubectl get pods -A`, the reference, for the three outputs people use
// on a whole cluster: -o name, the table and -o json. The pods are
// sidecarPod pods written straight into etcd (seedStored), as in
// bench-scale. Each command is a process of its own, timed from exec to
// exit by this process, its peak RSS read from /proc (timeProcess's
// method), its CPU from its rusage; runs alternate which side goes first.
// Each run's output goes to a file and must be byte for byte kubectl's (for
// the table, once the AGE column is cut out of both), else the line fails.
// kubectl is the one make builds from k8s.io/kubectl at the control
// plane's release (bench/kubectl). Lines, for OUT in name, table and json:
//
//	cli-100k-OUT-time  ours=ms clientgo=ms ratio target=<=0.33
//	cli-100k-OUT-rss   ours=MB clientgo=MB ratio target=<=0.15
//
// clientgo= holds kubectl's figure (the lines' usual field name). A
// kubectl run that does not finish (killed by the timeout, or failing)
// gives what it reached instead: its time and peak RSS until then and the
// bytes it had printed, in the line's note.

// Sides of the command pair.
const (
	CLIKinformer Side = "kinformer"
	CLIKubectl   Side = "kubectl"
)

// CLI100kOptions configure RunCLI100k.
type CLI100kOptions struct {
	// Pods in the cluster. Default 100,000.
	Pods int
	// Count of runs per side and output. Default 3.
	Count int
	// Kubectl is the kubectl binary (required).
	Kubectl string
	// Timeout bounds each run; a run that takes longer is killed and
	// counted as not finished. Default 15 minutes.
	Timeout time.Duration
	// Outputs to measure, among name, table and json; default all three.
	Outputs []string
	// Settle is the pause before each run (see ControlPlaneOptions.Settle).
	Settle time.Duration
	// Progress, when set, receives progress lines.
	Progress func(format string, args ...any)
	// Keep, when set, is called with the control plane's kubeconfig after
	// the runs, before the control plane stops (see ControlPlaneOptions).
	Keep func(kubeconfig string)
}

// cliOutputArgs are each output's flags, the same on both sides.
var cliOutputArgs = map[string][]string{
	"name":  {"-o", "name"},
	"table": nil,
	"json":  {"-o", "json"},
}

// The targets of issue 26: of kubectl's figures.
const (
	cli100kTimeTarget = 0.33
	cli100kRSSTarget  = 0.15
)

// RunCLI100k measures the command against kubectl (see above).
func RunCLI100k(ctx context.Context, opts CLI100kOptions) ([]Report, error) {
	if opts.Kubectl == "" {
		return nil, errors.New("cli-100k needs kubectl (make bench-cli builds it into bin/kubectl)")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 15 * time.Minute
	}
	if len(opts.Outputs) == 0 {
		opts.Outputs = []string{"name", "table", "json"}
	}
	if len(opts.Outputs) == 1 && opts.Outputs[0] == "none" {
		opts.Outputs = nil // the cluster only, for Keep
	}
	for _, o := range opts.Outputs {
		if _, ok := cliOutputArgs[o]; !ok {
			return nil, fmt.Errorf("cli-100k: unknown output %q (want name, table or json, or none alone)", o)
		}
	}
	if opts.Pods <= 0 {
		opts.Pods = 100_000
	}
	defaults(&opts.Pods, &opts.Count, 3, &opts.Settle)
	say := sayFunc(opts.Progress).orNothing()
	dir, err := os.MkdirTemp("", "kinformer-bench-cli100k-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	say("building the kinformer command")
	bin, err := buildKinformer(ctx, dir)
	if err != nil {
		return nil, err
	}
	cl, err := openCluster(ctx, "", testenv.Options{}, say)
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	have, err := cl.seedStored(ctx, opts.Pods, say)
	if err != nil {
		return nil, err
	}
	say("the cluster holds %d pods", have)
	if opts.Keep != nil {
		defer opts.Keep(cl.kubeconfig)
	}
	commands := map[Side]string{CLIKinformer: bin, CLIKubectl: opts.Kubectl}
	var reports []Report
	for _, output := range opts.Outputs {
		rs, err := runCLIOutput(ctx, opts, commands, cl.kubeconfig, output, dir, say)
		if err != nil {
			return nil, err
		}
		reports = append(reports, rs...)
	}
	return reports, nil
}

// cliRun is one process's figures.
type cliRun struct {
	millis, rssMB, cpuSeconds float64
	// bytes the process printed; digest of what it printed (normalized:
	// the table without its AGE column).
	bytes  int64
	digest string
	// failed says why the process did not finish, or is empty.
	failed string
}

// runCLIOutput measures both sides for one output.
func runCLIOutput(ctx context.Context, opts CLI100kOptions, commands map[Side]string, kubeconfig, output, dir string, say sayFunc) ([]Report, error) {
	sides := []Side{CLIKinformer, CLIKubectl}
	runs := map[Side][]cliRun{}
	for i := range opts.Count {
		for _, side := range alternating(i, sides) {
			if err := settle(ctx, opts.Settle); err != nil {
				return nil, err
			}
			args := append([]string{"get", "pods", "-A", "--kubeconfig", kubeconfig}, cliOutputArgs[output]...)
			file := filepath.Join(dir, fmt.Sprintf("%s-%s.out", output, side))
			r, err := measureCommand(ctx, opts.Timeout, commands[side], args, file, output == "table")
			if err != nil {
				return nil, fmt.Errorf("cli-100k-%s (%s, run %d): %w", output, side, i+1, err)
			}
			status := ""
			if r.failed != "" {
				status = "  DID NOT FINISH: " + r.failed
			}
			say("%s run %d %-9s %8.0f ms  peak RSS %7.1f MB  CPU %6.2f s  %6.1f MB printed%s",
				output, i+1, side, r.millis, r.rssMB, r.cpuSeconds, float64(r.bytes)/(1<<20), status)
			runs[side] = append(runs[side], r)
		}
	}
	values := func(side Side, f func(cliRun) float64) []float64 {
		var v []float64
		for _, r := range runs[side] {
			v = append(v, f(r))
		}
		return v
	}
	ours, ref := runs[CLIKinformer], runs[CLIKubectl]
	var problems []string
	broken := false // ours failed, or printed other than kubectl
	for _, r := range ours {
		if r.failed != "" {
			broken = true
			problems = append(problems, "kinformer did not finish: "+r.failed)
		}
	}
	refDigest := ""
	for _, r := range ref {
		if r.failed == "" {
			refDigest = r.digest
			break
		}
	}
	unfinished := 0
	for _, r := range ref {
		if r.failed != "" {
			unfinished++
			problems = append(problems, fmt.Sprintf("kubectl did not finish (%s) after %.0f s, having printed %.1f MB at a peak RSS of %.0f MB",
				r.failed, r.millis/1e3, float64(r.bytes)/(1<<20), r.rssMB))
		}
	}
	if refDigest != "" {
		for i, r := range ours {
			if r.failed == "" && r.digest != refDigest {
				broken = true
				problems = append(problems, fmt.Sprintf("run %d: the output differs from kubectl's", i+1))
			}
		}
	}
	note := "clientgo= is kubectl (bench/kubectl, built by make)"
	if output == "table" {
		note += "; outputs compared without the AGE column"
	}
	if refDigest != "" && len(problems) == 0 {
		note += "; output identical to kubectl's in every run"
	}
	for _, p := range problems {
		note += "; " + p
	}
	mk := func(name, unit string, target float64, f func(cliRun) float64) Report {
		r := pairReport(name, unit, target, values(CLIKinformer, f), values(CLIKubectl, f))
		r.OursCPU = Summarize(values(CLIKinformer, func(r cliRun) float64 { return r.cpuSeconds }))
		r.ClientGoCPU = Summarize(values(CLIKubectl, func(r cliRun) float64 { return r.cpuSeconds }))
		r.CPURatio = r.OursCPU.Median / r.ClientGoCPU.Median
		r.Detail = map[string]Summary{
			"ours-printed-MB":     Summarize(values(CLIKinformer, func(r cliRun) float64 { return float64(r.bytes) / (1 << 20) })),
			"clientgo-printed-MB": Summarize(values(CLIKubectl, func(r cliRun) float64 { return float64(r.bytes) / (1 << 20) })),
		}
		r.Note = note
		if len(problems) > 0 {
			// A line whose output is not kubectl's, or whose side did
			// not finish, is not met, whatever the figures say (an
			// unfinished kubectl's figures are what it reached).
			r.Met = r.Met && unfinished == 0 && refDigest != "" && !broken
		}
		return r
	}
	prefix := "cli-100k-" + output
	return []Report{
		mk(prefix+"-time", "ms", cli100kTimeTarget, func(r cliRun) float64 { return r.millis }),
		mk(prefix+"-rss", "MB", cli100kRSSTarget, func(r cliRun) float64 { return r.rssMB }),
	}, nil
}

// measureCommand runs bin args with its output in file, kills it after
// timeout, and returns its figures; the output is digested (and the file
// removed) before it returns. An error is returned for what stops the
// bench (the command cannot start); a command that fails or is killed is
// a run that did not finish.
func measureCommand(ctx context.Context, timeout time.Duration, bin string, args []string, file string, table bool) (cliRun, error) {
	out, err := os.Create(file)
	if err != nil {
		return cliRun{}, err
	}
	defer os.Remove(file)
	defer out.Close()
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	run, err := runPeak(cmd) // controlplane_cli.go
	if err != nil {
		return cliRun{}, err
	}
	err = run.exit
	r := cliRun{millis: run.millis, rssMB: run.rssMB, cpuSeconds: run.cpuSeconds}
	switch {
	case ctx.Err() != nil:
		return cliRun{}, ctx.Err()
	case runCtx.Err() != nil:
		r.failed = fmt.Sprintf("killed after the %v timeout", timeout)
	case err != nil:
		msg := bytes.TrimSpace(stderr.Bytes())
		if len(msg) > 300 {
			msg = msg[len(msg)-300:]
		}
		r.failed = fmt.Sprintf("%v: %s", err, msg)
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return cliRun{}, err
	}
	h := sha256.New()
	r.bytes, err = digestOutput(h, out, table)
	if err != nil {
		return cliRun{}, err
	}
	r.digest = fmt.Sprintf("%x", h.Sum(nil))
	return r, nil
}

// digestOutput writes what r holds to h, without the AGE column when table
// (the column's cells, cut at the columns where each table's header puts
// it), and returns the bytes read.
func digestOutput(h hash.Hash, r io.Reader, table bool) (int64, error) {
	if !table {
		return io.Copy(h, r)
	}
	var n int64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	header := true
	from, to := -1, -1
	for sc.Scan() {
		line := sc.Text()
		n += int64(len(line)) + 1
		switch {
		case line == "":
			header = true
		case header:
			header = false
			from, to = ageColumn(line)
		}
		h.Write([]byte(cutColumn(line, from, to)))
		h.Write([]byte{'\n'})
	}
	return n, sc.Err()
}

// columnStart matches the start of a header's column: a word after two
// spaces (one space joins the words of a name such as NOMINATED NODE).
var columnStart = regexp.MustCompile(`(^|  )[^ ]`)

// ageColumn is where a table header's AGE column starts and where the next
// column starts (-1 for the line's end); -1, -1 without one.
func ageColumn(header string) (int, int) {
	locs := columnStart.FindAllStringIndex(header, -1)
	for i, l := range locs {
		start := l[1] - 1
		if header[start:] == "AGE" || len(header) > start+4 && header[start:start+5] == "AGE  " {
			if i+1 < len(locs) {
				return start, locs[i+1][1] - 1
			}
			return start, -1
		}
	}
	return -1, -1
}

// cutColumn is line without [from, to) (to -1: the rest of the line).
func cutColumn(line string, from, to int) string {
	switch {
	case from < 0 || from > len(line):
		return line
	case to < 0 || to > len(line):
		return line[:from]
	}
	return line[:from] + line[to:]
}

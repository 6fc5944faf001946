package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// Scenario 7, second pair: the kinformer command against the library it is
// built on, for the same data. One side runs `kinformer get pods -A -o
// name` (the binary, built from this repository, as a person runs it; its
// output is counted and thrown away); the other syncs the same pods through
// the library's metadata informer (kube.NewFactory + kube.Informer of
// *metav1.PartialObjectMetadata,
// managedFields dropped, one handler), what the command's -o name needs.
// Both are separate processes, timed from exec to exit by the parent (so
// both pay for starting and loading the kubeconfig; the command also for
// discovery and for printing every name), and their peak RSS read from the
// kernel. The target: the command within 1.3x of the library.
//
// In the reports, "ours" is the command and "clientgo" the library.

// The sides of the pair.
const (
	CLIGet          Side = "cli-get"
	LibraryMetadata Side = "library-metadata"
)

// CLISides lists the pair, the command first.
var CLISides = []Side{CLIGet, LibraryMetadata}

// cliTarget is the most the command may take of the library's time and
// memory.
const cliTarget = 1.3

// runCLIPair measures the pair opts.Count times per side, alternating
// which goes first, against the server of kubeconfig, which holds want
// pods. self is the command line of the library side's child: the bench
// binary, and any arguments.
func runCLIPair(ctx context.Context, opts ControlPlaneOptions, self []string, kubeconfig string, want int, say func(string, ...any)) ([]Report, error) {
	dir, err := os.MkdirTemp("", "kinformer-bench-cli-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	say("building the kinformer command")
	bin, err := buildKinformer(ctx, dir)
	if err != nil {
		return nil, err
	}
	times, rss, cpu := map[Side][]float64{}, map[Side][]float64{}, map[Side][]float64{}
	for i := range opts.Count {
		for _, side := range alternating(i, CLISides) {
			if err := settle(ctx, opts.Settle); err != nil {
				return nil, err
			}
			var cmd *exec.Cmd
			if side == CLIGet {
				cmd = exec.CommandContext(ctx, bin, "get", "pods", "-A", "-o", "name", "--kubeconfig", kubeconfig)
			} else {
				cmd = exec.CommandContext(ctx, self[0], self[1:]...)
				cmd.Env = append(os.Environ(), ChildSideEnv+"="+string(side), ChildKubeconfigEnv+"="+kubeconfig,
					ChildPodsEnv+"="+strconv.Itoa(want))
			}
			millis, maxRSS, count, err := timeProcess(cmd, side)
			if err != nil {
				return nil, fmt.Errorf("controlplane-cli (%s, run %d): %w", side, i+1, err)
			}
			if count != want {
				return nil, fmt.Errorf("controlplane-cli (%s, run %d): %w: %d pods, want %d", side, i+1, ErrMismatch, count, want)
			}
			cpuSeconds := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
			say("run %d %-16s %8.0f ms  peak RSS %6.1f MB  CPU %5.2f s", i+1, side, millis, maxRSS, cpuSeconds)
			times[side] = append(times[side], millis)
			rss[side] = append(rss[side], maxRSS)
			cpu[side] = append(cpu[side], cpuSeconds)
		}
	}
	report := func(name, unit string, v map[Side][]float64) Report {
		r := Report{Name: name, Unit: unit, Target: Target{Op: AtMost, Value: cliTarget}.String(),
			Ours: Summarize(v[CLIGet]), ClientGo: Summarize(v[LibraryMetadata])}
		r.Ratio = r.Ours.Median / r.ClientGo.Median
		r.Met = r.Ratio <= cliTarget
		r.OursCPU, r.ClientGoCPU = Summarize(cpu[CLIGet]), Summarize(cpu[LibraryMetadata])
		r.CPURatio = r.OursCPU.Median / r.ClientGoCPU.Median
		return r
	}
	return []Report{
		report("controlplane-cli-get-name-time", "ms", times),
		report("controlplane-cli-get-name-rss", "MB", rss),
	}, nil
}

// timeProcess runs cmd and returns its wall time from start to exit in ms,
// its peak RSS in MB (runPeak's), and the pods it reported: the lines the
// command printed, or the count the library child printed.
func timeProcess(cmd *exec.Cmd, side Side) (float64, float64, int, error) {
	var out bytes.Buffer
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &stderr
	run, err := runPeak(cmd)
	if err = errors.Join(err, run.exit); err != nil {
		return 0, 0, 0, fmt.Errorf("%w: %s", err, stderr.String())
	}
	var count int
	if side == CLIGet {
		count = bytes.Count(out.Bytes(), []byte("\n"))
	} else {
		n, err := strconv.Atoi(strings.TrimSpace(out.String()))
		if err != nil {
			return 0, 0, 0, fmt.Errorf("child output %q: %w", out.String(), err)
		}
		count = n
	}
	return run.millis, run.rssMB, count, nil
}

// peakRun is what runPeak measured of a process.
type peakRun struct {
	millis, rssMB, cpuSeconds float64
	// exit is the process's Wait error: one that failed or was killed
	// still has its figures.
	exit error
}

// runPeak starts cmd, waits for it to exit and returns its wall time from
// start to exit, its peak RSS and its CPU (user and system). The error is
// for a process that could not start, or whose peak is unknown.
//
// The peak RSS is the child's VmHWM, read from /proc every few
// milliseconds while it runs, not its rusage: Linux starts a child's
// ru_maxrss at its parent's RSS (Go forks with a shared address space, and
// exec keeps the high-water mark of the address space it leaves), which
// would floor every side at the bench process's size. Where /proc is
// missing, rusage it is.
func runPeak(cmd *exec.Cmd) (peakRun, error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return peakRun{}, err
	}
	exited := make(chan error, 1)
	// Ends when the child exits; received below before returning.
	go func() { exited <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var hwmKB int64
	var exit error
wait:
	for {
		if kb, ok := readVmHWM(status); ok {
			hwmKB = max(hwmKB, kb)
		}
		select {
		case exit = <-exited:
			break wait
		case <-tick.C:
		}
	}
	r := peakRun{millis: float64(time.Since(start).Microseconds()) / 1e3, rssMB: float64(hwmKB) / 1024,
		cpuSeconds: (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), exit: exit}
	if hwmKB == 0 {
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			return r, errors.New("no peak RSS for the child: neither /proc nor rusage")
		}
		r.rssMB = float64(ru.Maxrss) / 1024 // KB on Linux
	}
	return r, nil
}

// buildKinformer builds the command of the kinformer module this one
// uses (the repository, through go.mod's replace) into dir.
func buildKinformer(ctx context.Context, dir string) (string, error) {
	list := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/kinformer/kinformer")
	root, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("find the kinformer module: %w", err)
	}
	bin := filepath.Join(dir, "kinformer")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/kinformer")
	build.Dir = strings.TrimSpace(string(root))
	if b, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build kinformer: %w: %s", err, b)
	}
	return bin, nil
}

// syncMetadata is the library side's child: it syncs every pod's metadata
// through a factory's metadata informer, with one handler, and prints how
// many it cached.
func syncMetadata(ctx context.Context, kubeconfig string, stdout io.Writer) error {
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: kubeconfig})
	if err != nil {
		return err
	}
	f, err := kube.NewFactory(cfg, kube.FactoryOptions{})
	if err != nil {
		return err
	}
	defer f.Shutdown()
	pods := kube.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}
	inf, _, err := kube.Informer(ctx, f, kube.InformerOptions[*metav1.PartialObjectMetadata]{
		Resource:  pods,
		Transform: informer.DropManagedFields[*metav1.PartialObjectMetadata],
	})
	if err != nil {
		return err
	}
	reg, err := inf.AddHandler(informer.HandlerFuncs[*metav1.PartialObjectMetadata]{}, informer.HandlerOptions{})
	if err != nil {
		return err
	}
	f.Start(ctx)
	select {
	case <-reg.Synced():
	case <-ctx.Done():
		return ctx.Err()
	}
	_, err = fmt.Fprintln(stdout, inf.Cache().Len())
	return err
}

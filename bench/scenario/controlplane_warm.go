package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/testenv"
)

// Scenario warm-restart: how long a restarted process takes, from its
// start to a synced informer of 20,000 pods, when it starts from a
// checkpoint (package checkpoint), against the same process starting cold.
// Three kinds of runs, each in its own process, alternating:
//
//   - cold: no checkpoint; the informer lists everything (and, like the
//     others, writes a checkpoint when it stops, which is how the
//     checkpoints below are made);
//   - fresh: a checkpoint the server still has the history of: the cache
//     is filled from the file and the watch resumes at its version;
//   - expired: a checkpoint older than etcd's compaction and than the
//     apiserver's watch cache (made before 1% of the pods changed, etcd
//     was compacted and the apiserver restarted): the resumed watch gets
//     410 Gone, and the informer lists everything, delivering only the
//     differences.
//
// Every side is the library's factory informer of pods in every namespace
// with DropManagedFields, the same code with or without a checkpoint file.
// The time runs from the parent starting the child process until the
// informer has synced; the peak RSS is the child's VmHWM. Lines:
// warm-restart-fresh-* (ours= fresh, clientgo= cold; time target 0.25, RSS
// 1.0) and warm-restart-expired-* (ours= expired; time target 0.6, RSS 1.0).

// Sides of the warm-restart scenario.
const (
	WarmCold    Side = "warm-cold"
	WarmFresh   Side = "warm-fresh"
	WarmExpired Side = "warm-expired"
)

// Environment of a warm-restart child: its checkpoint directory, and when
// the parent started it (Unix nanoseconds).
const (
	ChildCheckpointDirEnv = "KINFORMER_BENCH_CHILD_CHECKPOINT_DIR"
	ChildStartEnv         = "KINFORMER_BENCH_CHILD_START"
)

// WarmRestartOptions configures RunWarmRestart.
type WarmRestartOptions struct {
	Pods, Count int
	Settle      time.Duration
	Progress    func(format string, args ...any)
}

// RunWarmRestart measures the warm-restart scenario on a control plane of
// its own (it compacts etcd and restarts the apiserver) and returns four
// reports: time and peak RSS, fresh and expired, each against cold.
func RunWarmRestart(ctx context.Context, opts WarmRestartOptions) ([]Report, error) {
	defaults(&opts.Pods, &opts.Count, 5, &opts.Settle)
	say := opts.Progress
	if say == nil {
		say = func(string, ...any) {}
	}
	say("starting the control plane (the first start builds it, which takes many minutes)")
	env, err := testenv.Start(ctx, testenv.Options{Build: testenv.BuildOptions{Progress: os.Stderr}})
	if err != nil {
		return nil, err
	}
	defer env.Stop()
	kubeconfig, cs := env.KubeconfigPath(), env.Clientset()
	say("creating %d pods", opts.Pods)
	if err := createRealisticPods(ctx, cs, opts.Pods); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "kinformer-warm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	oldDir, freshDir := filepath.Join(work, "old"), filepath.Join(work, "fresh")

	// The expired checkpoint: written, then made stale.
	if _, _, err := runWarmChild(ctx, self, WarmCold, kubeconfig, opts.Pods, oldDir); err != nil {
		return nil, fmt.Errorf("warm-restart: first checkpoint: %w", err)
	}
	changed := max(opts.Pods/100, 1)
	say("changing %d pods, compacting etcd, restarting the apiserver", changed)
	if err := touchPods(ctx, cs, changed); err != nil {
		return nil, err
	}
	if _, err := env.CompactEtcd(ctx); err != nil {
		return nil, err
	}
	if err := env.RestartAPIServer(ctx); err != nil {
		return nil, err
	}
	// The fresh checkpoint, at a version the restarted apiserver has.
	if _, _, err := runWarmChild(ctx, self, WarmCold, kubeconfig, opts.Pods, freshDir); err != nil {
		return nil, fmt.Errorf("warm-restart: fresh checkpoint: %w", err)
	}

	times, rss := map[Side][]float64{}, map[Side][]float64{}
	var digest string
	for i := range opts.Count {
		for _, side := range alternating(i, []Side{WarmCold, WarmFresh, WarmExpired}) {
			if err := settle(ctx, opts.Settle); err != nil {
				return nil, err
			}
			dir := filepath.Join(work, fmt.Sprintf("run-%d-%s", i, side))
			switch side {
			case WarmFresh:
				err = copyDir(freshDir, dir)
			case WarmExpired:
				err = copyDir(oldDir, dir)
			}
			if err != nil {
				return nil, err
			}
			res, peak, err := runWarmChild(ctx, self, side, kubeconfig, opts.Pods, dir)
			if err != nil {
				return nil, fmt.Errorf("warm-restart (%s, run %d): %w", side, i+1, err)
			}
			if digest == "" {
				digest = res.Digest
			} else if res.Digest != digest {
				return nil, fmt.Errorf("warm-restart (%s, run %d): %w: digest %q, earlier runs %q", side, i+1, ErrMismatch, res.Digest, digest)
			}
			say("run %d %-12s %8.0f ms  peak RSS %6.1f MB", i+1, side, res.Millis, peak)
			times[side] = append(times[side], res.Millis)
			rss[side] = append(rss[side], peak)
			os.RemoveAll(dir)
		}
	}
	report := func(name, unit string, target float64, warm Side, v map[Side][]float64) Report {
		r := Report{Name: name, Unit: unit, Target: Target{Op: AtMost, Value: target}.String(),
			Ours: Summarize(v[warm]), ClientGo: Summarize(v[WarmCold])}
		r.Ratio = r.Ours.Median / r.ClientGo.Median
		r.Met = r.Ratio <= target
		return r
	}
	return []Report{
		report("warm-restart-fresh-time", "ms", 0.25, WarmFresh, times),
		report("warm-restart-fresh-rss", "MB", 1.0, WarmFresh, rss),
		report("warm-restart-expired-time", "ms", 0.6, WarmExpired, times),
		report("warm-restart-expired-rss", "MB", 1.0, WarmExpired, rss),
	}, nil
}

// touchPods changes the labels of the first n pods.
func touchPods(ctx context.Context, cs kubernetes.Interface, n int) error {
	return testenv.Parallel(ctx, n, 0, func(ctx context.Context, i int) error {
		p := newPod(i, 0)
		cur, err := cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Labels["touched"] = "true"
		_, err = cs.CoreV1().Pods(p.Namespace).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// copyDir copies the files of src into a new directory dst.
func copyDir(src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("no checkpoint in %s", src)
	}
	for _, e := range entries {
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		out, err := os.OpenFile(filepath.Join(dst, e.Name()), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err == nil {
			_, err = io.Copy(out, in)
			err = errors.Join(err, out.Close())
		}
		in.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// runWarmChild runs one warm-restart child with checkpoints in dir and
// returns its result and peak RSS in MB.
func runWarmChild(ctx context.Context, self string, side Side, kubeconfig string, pods int, dir string) (ChildResult, float64, error) {
	res, _, err := runChildJSON[ChildResult](ctx, childRun{args: []string{self}, env: childEnv(
		ChildSideEnv, string(side),
		ChildKubeconfigEnv, kubeconfig,
		ChildPodsEnv, strconv.Itoa(pods),
		ChildCheckpointDirEnv, dir,
		ChildStartEnv, strconv.FormatInt(time.Now().UnixNano(), 10))})
	return res, float64(res.PeakRSSKB) / 1024, err
}

// isWarmSide reports the sides warmChild runs.
func isWarmSide(s Side) bool { return s == WarmCold || s == WarmFresh || s == WarmExpired }

// warmChild is a warm-restart child: the factory informer of every pod,
// with a checkpoint in ChildCheckpointDirEnv, timed from ChildStartEnv to
// synced. Stopping writes the checkpoint (when the cache changed since the
// one it started from); the result is printed after that.
func warmChild(ctx context.Context, w io.Writer) error {
	startNanos, err := strconv.ParseInt(os.Getenv(ChildStartEnv), 10, 64)
	if err != nil {
		return fmt.Errorf("%s: %w", ChildStartEnv, err)
	}
	start := time.Unix(0, startNanos)
	want, err := strconv.Atoi(os.Getenv(ChildPodsEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", ChildPodsEnv, err)
	}
	if dir := os.Getenv(ChildProfileEnv); dir != "" {
		pf, err := os.Create(filepath.Join(dir, "cpu-"+os.Getenv(ChildSideEnv)+".prof"))
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: os.Getenv(ChildKubeconfigEnv)})
	if err != nil {
		return err
	}
	f, err := kube.NewFactory(cfg, kube.FactoryOptions{
		Checkpoints: kube.Checkpoints{Dir: os.Getenv(ChildCheckpointDirEnv)},
		// The expired side reports its 410; nothing else is expected.
		ErrorHandler: func(err error) { fmt.Fprintln(os.Stderr, "warm child:", err) },
	})
	if err != nil {
		return err
	}
	inf, _, err := kube.Informer(ctx, f, kube.InformerOptions[*corev1.Pod]{
		Checkpoint: true,
		Transform:  informer.DropManagedFields[*corev1.Pod],
	})
	if err != nil {
		return err
	}
	f.Start(ctx)
	if !inf.WaitForCacheSync(ctx) {
		f.Shutdown()
		return ctx.Err()
	}
	elapsed := time.Since(start)
	pods := inf.Cache().List()
	res := ChildResult{Millis: float64(elapsed.Microseconds()) / 1e3, Digest: cacheDigest(pods)}
	if kb, ok := readVmHWM("/proc/self/status"); ok {
		res.PeakRSSKB = kb
	}
	f.Shutdown()
	if len(pods) < want {
		return fmt.Errorf("synced %d pods, want %d", len(pods), want)
	}
	return json.NewEncoder(w).Encode(res)
}

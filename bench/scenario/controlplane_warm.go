package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/testenv"
)

// Scenario warm-restart: how long a restarted process takes, from its
// start to a synced informer of every pod (sidecarPod pods written
// straight into etcd, seedStored), when it starts from a
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
// Each kind of run is made twice: with the library's factory informer of
// pods in every namespace with DropManagedFields (full objects), and with
// its informer of PodView (a projected view, what a controller of a large
// cluster runs); the same code with or without a checkpoint file. The time
// runs from the parent starting the child process until the informer has
// synced; the CPU is the child's own (user + system) at that moment; the
// peak RSS is the child's VmHWM. Lines (ours= the restart, clientgo= the
// same informer cold):
//
//	warm-restart-fresh-time, -rss       full objects from a fresh checkpoint (time: no target, bound by
//	                                    decoding full pods; RSS <= 1.0)
//	warm-restart-expired-time, -rss     full objects from an expired one (<= 1.0: never slower than cold)
//	warm-restart-view-fresh-time, -rss  the view from a fresh checkpoint (time <= 0.25; RSS <= 1.0)
//	warm-restart-view-expired-time, -rss the view from an expired one (<= 1.0)

// Sides of the warm-restart scenario: full objects, and the view.
const (
	WarmCold         Side = "warm-cold"
	WarmFresh        Side = "warm-fresh"
	WarmExpired      Side = "warm-expired"
	WarmViewsCold    Side = "warm-views-cold"
	WarmViewsFresh   Side = "warm-views-fresh"
	WarmViewsExpired Side = "warm-views-expired"
)

// isViewsWarmSide reports the sides whose informer is of PodView.
func isViewsWarmSide(s Side) bool {
	return s == WarmViewsCold || s == WarmViewsFresh || s == WarmViewsExpired
}

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
	// The apiserver keeps its watch cache: the fresh side's version is
	// confirmed from it, and the expired side's is older than its window
	// once the apiserver has restarted.
	cl, err := openCluster(ctx, "", testenv.Options{}, say)
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	env, kubeconfig, cs := cl.env, cl.kubeconfig, cl.cs
	// Written straight into etcd: creating 100,000 pods through the API
	// takes this machine over 8 minutes, writing them well under one.
	have, err := cl.seedStored(ctx, opts.Pods, say)
	if err != nil {
		return nil, err
	}
	if have != opts.Pods {
		return nil, fmt.Errorf("warm-restart: the cluster holds %d pods, want %d", have, opts.Pods)
	}
	if full, withoutMF, err := cl.podJSONSize(ctx); err == nil {
		say("%d pods of %d bytes of JSON as the server holds one (%d without managedFields)", have, full, withoutMF)
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
	// Each side's checkpoint directory; a run copies its side's.
	oldDir := map[Side]string{WarmCold: filepath.Join(work, "old"), WarmViewsCold: filepath.Join(work, "old-views")}
	freshDir := map[Side]string{WarmCold: filepath.Join(work, "fresh"), WarmViewsCold: filepath.Join(work, "fresh-views")}
	colds := []Side{WarmCold, WarmViewsCold}

	// The expired checkpoints: written, then made stale.
	for _, cold := range colds {
		if _, err := runWarmChild(ctx, self, cold, kubeconfig, opts.Pods, oldDir[cold]); err != nil {
			return nil, fmt.Errorf("warm-restart: first checkpoint (%s): %w", cold, err)
		}
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
	// The fresh checkpoints, at a version the restarted apiserver has.
	for _, cold := range colds {
		if _, err := runWarmChild(ctx, self, cold, kubeconfig, opts.Pods, freshDir[cold]); err != nil {
			return nil, fmt.Errorf("warm-restart: fresh checkpoint (%s): %w", cold, err)
		}
	}

	coldOf := map[Side]Side{WarmFresh: WarmCold, WarmExpired: WarmCold, WarmViewsFresh: WarmViewsCold, WarmViewsExpired: WarmViewsCold}
	times, cpu, rss := map[Side][]float64{}, map[Side][]float64{}, map[Side][]float64{}
	digest := map[Side]string{} // by cold side: every run of one informer type lists the same pods
	for i := range opts.Count {
		for _, side := range alternating(i, []Side{WarmCold, WarmFresh, WarmExpired, WarmViewsCold, WarmViewsFresh, WarmViewsExpired}) {
			if err := settle(ctx, opts.Settle); err != nil {
				return nil, err
			}
			dir := filepath.Join(work, fmt.Sprintf("run-%d-%s", i, side))
			switch side {
			case WarmFresh, WarmViewsFresh:
				err = copyDir(freshDir[coldOf[side]], dir)
			case WarmExpired, WarmViewsExpired:
				err = copyDir(oldDir[coldOf[side]], dir)
			}
			if err != nil {
				return nil, err
			}
			res, err := runWarmChild(ctx, self, side, kubeconfig, opts.Pods, dir)
			if err != nil {
				return nil, fmt.Errorf("warm-restart (%s, run %d): %w", side, i+1, err)
			}
			kind := side
			if c, ok := coldOf[side]; ok {
				kind = c
			}
			if digest[kind] == "" {
				digest[kind] = res.Digest
			} else if res.Digest != digest[kind] {
				return nil, fmt.Errorf("warm-restart (%s, run %d): %w: digest %q, earlier runs %q", side, i+1, ErrMismatch, res.Digest, digest[kind])
			}
			peak := float64(res.PeakRSSKB) / 1024
			say("run %d %-18s %8.0f ms  CPU %6.2f s  peak RSS %6.1f MB", i+1, side, res.Millis, res.CPUSeconds, peak)
			times[side] = append(times[side], res.Millis)
			cpu[side] = append(cpu[side], res.CPUSeconds)
			rss[side] = append(rss[side], peak)
			os.RemoveAll(dir)
		}
	}
	report := func(name, unit string, target float64, warm Side, v map[Side][]float64, withCPU bool) Report {
		r := Report{Name: name, Unit: unit, Ours: Summarize(v[warm]), ClientGo: Summarize(v[coldOf[warm]]),
			Note: fmt.Sprintf("ours= %s, clientgo= %s", warm, coldOf[warm])}
		r.Ratio = r.Ours.Median / r.ClientGo.Median
		if target > 0 {
			r.Target = Target{Op: AtMost, Value: target}.String()
			r.Met = r.Ratio <= target
		}
		if withCPU {
			r.OursCPU, r.ClientGoCPU = Summarize(cpu[warm]), Summarize(cpu[coldOf[warm]])
			r.CPURatio = r.OursCPU.Median / r.ClientGoCPU.Median
		}
		return r
	}
	return []Report{
		report("warm-restart-fresh-time", "ms", 0, WarmFresh, times, true),
		report("warm-restart-fresh-rss", "MB", 1.0, WarmFresh, rss, false),
		report("warm-restart-expired-time", "ms", 1.0, WarmExpired, times, true),
		report("warm-restart-expired-rss", "MB", 1.0, WarmExpired, rss, false),
		report("warm-restart-view-fresh-time", "ms", 0.25, WarmViewsFresh, times, true),
		report("warm-restart-view-fresh-rss", "MB", 1.0, WarmViewsFresh, rss, false),
		report("warm-restart-view-expired-time", "ms", 1.0, WarmViewsExpired, times, true),
		report("warm-restart-view-expired-rss", "MB", 1.0, WarmViewsExpired, rss, false),
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

// warmResult is what a warm-restart child reports: ChildResult and its
// CPU time (user + system) when it had synced.
type warmResult struct {
	ChildResult
	CPUSeconds float64 `json:"cpuSeconds"`
}

// runWarmChild runs one warm-restart child with checkpoints in dir.
func runWarmChild(ctx context.Context, self string, side Side, kubeconfig string, pods int, dir string) (warmResult, error) {
	res, _, err := runChildJSON[warmResult](ctx, childRun{args: []string{self}, env: childEnv(
		ChildSideEnv, string(side),
		ChildKubeconfigEnv, kubeconfig,
		ChildPodsEnv, strconv.Itoa(pods),
		ChildCheckpointDirEnv, dir,
		ChildStartEnv, strconv.FormatInt(time.Now().UnixNano(), 10))})
	return res, err
}

// isWarmSide reports the sides warmChild runs.
func isWarmSide(s Side) bool {
	return s == WarmCold || s == WarmFresh || s == WarmExpired || isViewsWarmSide(s)
}

// warmChild is a warm-restart child: the factory informer of every pod
// (of PodView on the view sides), with a checkpoint in
// ChildCheckpointDirEnv, timed from ChildStartEnv to synced. Stopping
// writes the checkpoint (when the cache changed since the one it started
// from); the result is printed after that.
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
	side := Side(os.Getenv(ChildSideEnv))
	// With ChildProfileEnv: cpu-SIDE.prof until synced (not the
	// checkpoint written when stopping), then heap-SIDE.prof (its
	// alloc_space is every allocation until synced).
	profDir := os.Getenv(ChildProfileEnv)
	if profDir != "" {
		pf, err := os.Create(filepath.Join(profDir, "cpu-"+string(side)+".prof"))
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile() // for the early returns; a second stop does nothing
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
	var res warmResult
	var synced int
	if isViewsWarmSide(side) {
		synced, err = syncWarm(ctx, f, start, &res, kube.InformerOptions[*PodView]{Checkpoint: true})
	} else {
		synced, err = syncWarm(ctx, f, start, &res, kube.InformerOptions[*corev1.Pod]{
			Checkpoint: true,
			Transform:  informer.DropManagedFields[*corev1.Pod],
		})
	}
	if profDir != "" && err == nil {
		pprof.StopCPUProfile()
		err = writeHeapProfile(filepath.Join(profDir, "heap-"+string(side)+".prof"))
	}
	f.Shutdown() // writes the checkpoint
	if err != nil {
		return err
	}
	if synced < want {
		return fmt.Errorf("synced %d pods, want %d", synced, want)
	}
	return json.NewEncoder(w).Encode(res)
}

// syncWarm starts f's informer of opts, waits until it has synced, and
// fills res: the time since start, the CPU used, the peak RSS, the digest
// of the cached keys and versions. It returns how many objects it holds.
func syncWarm[T cache.Object](ctx context.Context, f *kube.Factory, start time.Time, res *warmResult, opts kube.InformerOptions[T]) (int, error) {
	inf, _, err := kube.Informer(ctx, f, opts)
	if err != nil {
		return 0, err
	}
	f.Start(ctx)
	if !inf.WaitForCacheSync(ctx) {
		return 0, ctx.Err()
	}
	elapsed := time.Since(start)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		res.CPUSeconds = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	res.Millis = float64(elapsed.Microseconds()) / 1e3
	if kb, ok := readVmHWM("/proc/self/status"); ok {
		res.PeakRSSKB = kb
	}
	objs := inf.Cache().List()
	pods := make([]*corev1.Pod, len(objs))
	for i, o := range objs {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: o.GetName(), ResourceVersion: o.GetResourceVersion()}}
	}
	res.Digest = cacheDigest(pods)
	return len(objs), nil
}

// writeHeapProfile writes the heap profile, after a GC, to path.
func writeHeapProfile(path string) error {
	runtime.GC()
	hf, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup("heap").WriteTo(hf, 0), hf.Close())
}

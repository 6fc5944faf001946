package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	cgcache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/testenv"
)

// Scenario 7: initial sync of 20,000 realistic pods (about 3 KB of JSON
// each, plus the managedFields the server adds) from a real kube-apiserver
// (testenv), each side in its own process, runs alternating.
//
// It is not in the registry, because it needs a control plane: cmd/bench
// runs it with -controlplane (see RunControlPlane). The parent starts one
// control plane, creates the pods once, then re-executes its own binary
// once per run with ChildSideEnv set; the child syncs the pods through the
// side's informer (kinformer: kube.Source + NewShared; client-go: its
// informer factory) with one handler, prints a ChildResult as JSON and
// exits. The parent reads the child's peak RSS from the kernel (rusage).
//
// Both sides use their default list mode against this server, which is the
// streaming list (client-go 0.37 turns WatchListClient on by default;
// kinformer's reflector tries it first), and the same wire format,
// protobuf (kinformer's default; client-go's clientset is told to use it,
// as Kubernetes' own components do).

// ChildSideEnv, set in a child's environment, names the side it runs;
// ChildKubeconfigEnv and ChildPodsEnv say where and how many pods to sync.
const (
	ChildSideEnv       = "KINFORMER_BENCH_CHILD_SIDE"
	ChildKubeconfigEnv = "KINFORMER_BENCH_CHILD_KUBECONFIG"
	ChildPodsEnv       = "KINFORMER_BENCH_CHILD_PODS"
	// ChildProfileEnv, when set, is a directory where a child writes
	// cpu-SIDE.prof (the sync) and heap-SIDE.prof (after the sync).
	ChildProfileEnv = "KINFORMER_BENCH_CHILD_PROFILE"
	// ExperimentDropManagedFieldsEnv=true makes the kinformer child drop
	// managedFields (informer.DropManagedFields) - an experiment to size a
	// design change, never used for the reported figures.
	ExperimentDropManagedFieldsEnv = "KINFORMER_BENCH_EXPERIMENT_DROP_MANAGED_FIELDS"
)

// OursShared is kinformer's side of scenario 7 with
// kube.SourceOptions.ShareMutableParts on: pods share byte-identical
// containers, volumes and conditions (about half a pod's memory; see the
// pod-memory-shared scenario). Its lines carry the "-shared" suffix.
const OursShared Side = "ours-shared"

// ChildResult is what a child reports on its standard output.
type ChildResult struct {
	// Millis is the time from the informer's start until the handler has
	// been handed every pod.
	Millis float64 `json:"millis"`
	Digest string  `json:"digest"`
	// PeakRSSKB is the child's own peak resident set size (VmHWM of
	// /proc/self/status, read just before it reports), 0 where there is no
	// /proc. Its rusage is not used where this is known: Linux starts a
	// child's ru_maxrss at its parent's RSS (see timeProcess), which would
	// floor both sides at the bench process's size.
	PeakRSSKB int64 `json:"peakRSSKB,omitempty"`
}

// ControlPlaneOptions configures RunControlPlane.
type ControlPlaneOptions struct {
	// Pods to create and sync. Default 20,000.
	Pods int
	// Count of runs per side. Default 5.
	Count int
	// Progress, when set, receives progress lines.
	Progress func(format string, args ...any)
	// Kubeconfig, when set, names a running cluster to use instead of
	// starting one; pods are created there only if it has fewer than Pods.
	Kubeconfig string
	// Keep, when set, is called with the kubeconfig of the control plane
	// after the runs, before it is stopped (for example to wait for an
	// interrupt, keeping it for later runs with Kubeconfig).
	Keep func(kubeconfig string)
	// ProfileDir, when set, makes every child write profiles there (see
	// ChildProfileEnv).
	ProfileDir string
	// Settle is the pause before each child run, so that every run starts
	// on a server that has finished with the previous one (freeing what it
	// encoded for it). Without it, a run started right after a kinformer
	// run (whose child exits soonest) measured up to 50% slower, on either
	// side, which made the figures depend on the order of the runs. Zero
	// means DefaultSettle; negative means no pause.
	Settle time.Duration
	// OnlyCLI runs the second pair only: the kinformer command against the
	// library (see runCLIPair).
	OnlyCLI bool
}

// DefaultSettle is ControlPlaneOptions.Settle's default.
const DefaultSettle = 3 * time.Second

// RunControlPlane measures scenario 7 and returns two reports: sync time
// and peak RSS.
func RunControlPlane(ctx context.Context, opts ControlPlaneOptions) ([]Report, error) {
	defaults(&opts.Pods, &opts.Count, 5, &opts.Settle)
	say := sayFunc(opts.Progress).orNothing()
	cl, err := openCluster(ctx, opts.Kubeconfig, testenv.Options{}, say)
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	if opts.Keep != nil && cl.env != nil {
		defer opts.Keep(cl.kubeconfig)
	}
	kubeconfig := cl.kubeconfig
	have, err := cl.seed(ctx, opts.Pods, newPod, say)
	if err != nil {
		return nil, err
	}

	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if opts.OnlyCLI {
		return runCLIPair(ctx, opts, []string{self}, kubeconfig, max(have, opts.Pods), say)
	}
	times, rss := map[Side][]float64{}, map[Side][]float64{}
	var digest string
	for i := range opts.Count {
		for _, side := range alternating(i, []Side{Ours, ClientGo, OursShared}) {
			if err := settle(ctx, opts.Settle); err != nil {
				return nil, err
			}
			res, maxRSS, err := runChild(ctx, self, side, kubeconfig, opts.Pods, opts.ProfileDir)
			if err != nil {
				return nil, fmt.Errorf("controlplane-sync (%s, run %d): %w", side, i+1, err)
			}
			if digest == "" {
				digest = res.Digest
			} else if res.Digest != digest {
				return nil, fmt.Errorf("controlplane-sync (%s, run %d): %w: digest %q, earlier runs %q",
					side, i+1, ErrMismatch, res.Digest, digest)
			}
			say("run %d %-8s %8.0f ms  peak RSS %6.1f MB", i+1, side, res.Millis, maxRSS)
			times[side] = append(times[side], res.Millis)
			rss[side] = append(rss[side], maxRSS)
		}
	}
	report := func(name, unit string, target float64, v map[Side][]float64) Report {
		r := Report{Name: name, Unit: unit, Target: Target{Op: AtMost, Value: target}.String(),
			Ours: Summarize(v[Ours]), ClientGo: Summarize(v[ClientGo])}
		r.Ratio = r.Ours.Median / r.ClientGo.Median
		r.Met = r.Ratio <= target
		return r
	}
	shared := func(v map[Side][]float64) map[Side][]float64 {
		return map[Side][]float64{Ours: v[OursShared], ClientGo: v[ClientGo]}
	}
	reports := []Report{
		report("controlplane-sync-time", "ms", 0.6, times),
		report("controlplane-sync-rss", "MB", 0.6, rss),
		report("controlplane-sync-time-shared", "ms", 0.6, shared(times)),
		report("controlplane-sync-rss-shared", "MB", 0.6, shared(rss)),
	}
	cli, err := runCLIPair(ctx, opts, []string{self}, kubeconfig, max(have, opts.Pods), say)
	if err != nil {
		return nil, err
	}
	return append(reports, cli...), nil
}

// runChild runs one side's sync in a child process and returns its result
// and peak RSS in MB.
func runChild(ctx context.Context, self string, side Side, kubeconfig string, pods int, profileDir string) (ChildResult, float64, error) {
	res, ps, err := runChildJSON[ChildResult](ctx, childRun{args: []string{self}, env: childEnv(
		ChildSideEnv, string(side),
		ChildKubeconfigEnv, kubeconfig,
		ChildPodsEnv, strconv.Itoa(pods),
		ChildProfileEnv, profileDir)})
	if err != nil {
		return ChildResult{}, 0, err
	}
	return res, peakRSSMB(res.PeakRSSKB, ps), nil
}

// RunChild is a child's whole job: when ChildSideEnv is set it syncs the
// pods, writes a ChildResult to stdout and returns true; otherwise it
// returns false at once. A command calls it first thing in main.
func RunChild(ctx context.Context) (bool, error) {
	side := Side(os.Getenv(ChildSideEnv))
	if side == "" {
		return false, nil
	}
	if side == LibraryMetadata {
		return true, syncMetadata(ctx, os.Getenv(ChildKubeconfigEnv), os.Stdout)
	}
	if isWarmSide(side) {
		return true, warmChild(ctx, os.Stdout)
	}
	if isWarmViewSide(side) {
		return true, warmViewChild(ctx, os.Stdout)
	}
	if isMemorySide(side) {
		return true, memoryChild(ctx, side, os.Stdout)
	}
	if isOutageSide(side) {
		return true, outageChild(ctx, side, os.Stdin, os.Stdout)
	}
	pods, err := strconv.Atoi(os.Getenv(ChildPodsEnv))
	if err != nil {
		return true, fmt.Errorf("%s: %w", ChildPodsEnv, err)
	}
	dir := os.Getenv(ChildProfileEnv)
	if dir != "" {
		f, err := os.Create(filepath.Join(dir, "cpu-"+string(side)+".prof"))
		if err != nil {
			return true, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return true, err
		}
	}
	var profErr error
	synced := func() {
		if dir == "" {
			return
		}
		pprof.StopCPUProfile()
		runtime.GC()
		f, err := os.Create(filepath.Join(dir, "heap-"+string(side)+".prof"))
		if err != nil {
			profErr = err
			return
		}
		defer f.Close()
		profErr = pprof.Lookup("heap").WriteTo(f, 0)
	}
	res, err := syncFromServer(ctx, side, os.Getenv(ChildKubeconfigEnv), pods, synced)
	if err = errors.Join(err, profErr); err != nil {
		return true, err
	}
	if kb, ok := readVmHWM("/proc/self/status"); ok {
		res.PeakRSSKB = kb
	}
	return true, json.NewEncoder(os.Stdout).Encode(res)
}

// syncFromServer builds side's pod informer against the server, with one
// handler, and times until the handler has been handed want pods; then it
// calls synced, with the informer still running.
func syncFromServer(ctx context.Context, side Side, kubeconfig string, want int, synced func()) (ChildResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var seen atomic.Int64
	all := make(chan struct{})
	count := func() {
		if seen.Add(1) == int64(want) {
			close(all)
		}
	}
	var (
		start  time.Time
		cached func() []*corev1.Pod
		wait   func()
	)
	switch side {
	case Ours, OursShared:
		cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: kubeconfig})
		if err != nil {
			return ChildResult{}, err
		}
		start = time.Now()
		src, err := kube.Source[*corev1.Pod](ctx, cfg, kube.SourceOptions{ShareMutableParts: side == OursShared})
		if err != nil {
			return ChildResult{}, err
		}
		opts := informer.Options[*corev1.Pod]{
			Source:   src,
			Indexers: cache.Indexers[*corev1.Pod]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[*corev1.Pod]},
		}
		if os.Getenv(ExperimentDropManagedFieldsEnv) == "true" {
			opts.Transform = informer.DropManagedFields[*corev1.Pod]
		}
		inf, err := informer.NewShared(opts)
		if err != nil {
			return ChildResult{}, err
		}
		if _, err := inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
			AddFunc: func(*corev1.Pod, bool) { count() },
		}, informer.HandlerOptions{}); err != nil {
			return ChildResult{}, err
		}
		done := make(chan struct{})
		go func() { defer close(done); _ = inf.Run(ctx) }()
		cached = func() []*corev1.Pod { return inf.Cache().List() }
		wait = func() { cancel(); <-done }
	case ClientGo:
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return ChildResult{}, err
		}
		start = time.Now()
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return ChildResult{}, err
		}
		f := informers.NewSharedInformerFactory(cs, 0)
		inf := f.Core().V1().Pods().Informer()
		if _, err := inf.AddEventHandler(cgcache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { count() },
		}); err != nil {
			return ChildResult{}, err
		}
		f.Start(ctx.Done())
		cached = func() []*corev1.Pod {
			var out []*corev1.Pod
			for _, o := range inf.GetIndexer().List() {
				out = append(out, o.(*corev1.Pod))
			}
			return out
		}
		wait = func() { cancel(); f.Shutdown() }
	default:
		return ChildResult{}, fmt.Errorf("unknown side %q", side)
	}
	select {
	case <-all:
	case <-ctx.Done():
		return ChildResult{}, ctx.Err()
	case <-time.After(10 * time.Minute):
		return ChildResult{}, fmt.Errorf("handler saw %d of %d pods after 10 minutes", seen.Load(), want)
	}
	elapsed := time.Since(start)
	digest := cacheDigest(cached())
	synced()
	wait()
	return ChildResult{Millis: float64(elapsed.Microseconds()) / 1e3, Digest: digest}, nil
}

// createRealisticPods creates pods 0..n-1 of newPod (their namespaces
// first) and sets their status, so the server holds the same realistic
// pods the in-memory scenarios use, plus server-set fields.
func createRealisticPods(ctx context.Context, cs kubernetes.Interface, n int) error {
	return createPods(ctx, cs, n, newPod)
}

// createPods creates pods 0..n-1 of pod (their namespaces first) through
// the API, each with a create and then a status update, as a kubelet
// would set it: the server adds managedFields of both managers.
func createPods(ctx context.Context, cs kubernetes.Interface, n int, pod func(i int, rv int64) *corev1.Pod) error {
	if err := createNamespaces(ctx, cs, min(n, podNamespaces)); err != nil {
		return err
	}
	return testenv.Parallel(ctx, n, 0, func(ctx context.Context, i int) error {
		want := pod(i, 0)
		p := want.DeepCopy()
		p.ResourceVersion, p.UID, p.CreationTimestamp = "", "", metav1.Time{}
		p.OwnerReferences[0].UID = "00000000-0000-4000-8000-000000000001"
		p.Status = corev1.PodStatus{}
		created, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("create pod %d: %w", i, err)
		}
		created.Status = want.Status
		created.Status.HostIPs = []corev1.HostIP{{IP: want.Status.HostIP}}
		if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update status of pod %d: %w", i, err)
		}
		return nil
	})
}

// createNamespaces creates namespaces ns-0..ns-(n-1), skipping those that
// exist.
func createNamespaces(ctx context.Context, cs kubernetes.Interface, n int) error {
	for i := range n {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns-" + strconv.Itoa(i)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

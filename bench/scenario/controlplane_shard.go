package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	cgcache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kinformer/kinformer/bench/internal/podsync"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/testenv"
)

// Sharding scenarios, against a control plane whose apiserver has the
// ShardedListAndWatch feature gate on (unless ShardOptions.ClientSide).
//
// shard-rss: one replica of N (N = 1, 2, 4) syncs its share of the pods,
// range 0 of shard.Split(N), in a child process, through kinformer (a kube
// source with Selection.Shard, in cmd/shardchild: a binary of its own, built
// by RunShard, that links kinformer alone, as a replica would) and through
// client-go (its informer factory with ListOptions.ShardSelector set to the
// same selector; the bench binary). Lines:
//
//	shard-rss-nN          peak RSS, ours against client-go
//	shard-sync-nN         sync time, ours against client-go
//	shard-rss-nN-vs-n1    ours= our peak RSS at N, clientgo= ours at N=1;
//	                      the target is at most 1.2/N, the 0.3 at
//	                      N=4 (it was 1.3/N, which gave 0.325)
//
// shard-converge: three replica children (replicas.Group and Informer over
// the pods, 8 ranges, Leases of ShardLeaseDuration) share the pods; one is
// killed with SIGKILL, and the parent times, from the kill, until every
// range is claimed again by a live replica (owned, so synced, elsewhere).
// ours= is that time; clientgo= is the bound for it, the Lease
// duration plus one sync of the moved ranges (a kinformer child syncing the
// victim's ranges alone, measured in the same run): client-go has no
// sharded handoff to compare with. The target: ratio at most 1. A new
// replica then joins before the next run.

// Environment of the shard children.
const (
	// ChildShardSideEnv names the side of a shard-rss child (ours or
	// clientgo), ChildShardEnv its shard (shard.ParseSet's form) and
	// ChildShardWantEnv the number of pods in it.
	ChildShardSideEnv = "KINFORMER_BENCH_CHILD_SHARD_SIDE"
	ChildShardEnv     = "KINFORMER_BENCH_CHILD_SHARD"
	ChildShardWantEnv = "KINFORMER_BENCH_CHILD_SHARD_WANT"
	// ChildReplicaEnv, set to an identity, makes the child a replica of
	// the shard-converge group until it is killed.
	ChildReplicaEnv = "KINFORMER_BENCH_CHILD_REPLICA"
)

// shardVsN1Target over N is the target of shard-rss-nN-vs-n1: 0.3 at
// N = 4, the bound for a replica of four.
const shardVsN1Target = 1.2

// Settings of the shard-converge group.
const (
	ShardLeaseDuration = 4 * time.Second
	shardRenew         = 500 * time.Millisecond
	shardPoll          = 250 * time.Millisecond
	shardSlots         = 8
	shardGroup         = "bench"
	shardLeaseNS       = "default"
)

// ShardOptions configure RunShard.
type ShardOptions struct {
	// Pods to create and shard. Default 20,000.
	Pods int
	// Count of runs per side and N, and of kills. Default 3.
	Count int
	// Replicas are the N of shard-rss. Default 1, 2, 4.
	Replicas []int
	// Kubeconfig, when set, names a running cluster (with the gate on,
	// unless ClientSide) instead of starting a control plane.
	Kubeconfig string
	// ClientSide starts the control plane with the feature gate off, so
	// the sources filter on the client side.
	ClientSide bool
	// Settle is the pause before each child run (see
	// ControlPlaneOptions.Settle).
	Settle time.Duration
	// Progress, when set, receives progress lines.
	Progress func(format string, args ...any)
}

// RunShard measures shard-rss and shard-converge.
func RunShard(ctx context.Context, opts ShardOptions) ([]Report, error) {
	defaults(&opts.Pods, &opts.Count, 3, &opts.Settle)
	if len(opts.Replicas) == 0 {
		opts.Replicas = []int{1, 2, 4}
	}
	say := sayFunc(opts.Progress).orNothing()
	if opts.Kubeconfig == "" {
		say("ShardedListAndWatch=%v", !opts.ClientSide)
	}
	cl, err := openCluster(ctx, opts.Kubeconfig, testenv.Options{
		FeatureGates: map[string]bool{"ShardedListAndWatch": !opts.ClientSide}}, say)
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	kubeconfig, cs := cl.kubeconfig, cl.cs
	if _, err := cl.seed(ctx, opts.Pods, newPod, say); err != nil {
		return nil, err
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	bin, err := os.MkdirTemp("", "kinformer-shard-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(bin)
	say("building cmd/shardchild")
	ours, err := buildShardChild(ctx, bin)
	if err != nil {
		return nil, err
	}
	children := map[Side]string{Ours: ours, ClientGo: self}
	countIn := func(set shard.Set) int {
		n := 0
		for i := range pods.Items {
			if set.Contains(&pods.Items[i]) {
				n++
			}
		}
		return n
	}
	pause := func() error { return settle(ctx, opts.Settle) }

	var reports []Report
	oursRSS := map[int][]float64{}
	for _, n := range opts.Replicas {
		set, err := shard.NewSet(shard.UID, shard.Split(n)[0])
		if err != nil {
			return nil, err
		}
		want := countIn(set)
		times, rss := map[Side][]float64{}, map[Side][]float64{}
		var digest string
		for i := range opts.Count {
			for _, side := range alternating(i, Sides) {
				if err := pause(); err != nil {
					return nil, err
				}
				res, peak, err := runShardChild(ctx, children[side], side, kubeconfig, set, want)
				if err != nil {
					return nil, fmt.Errorf("shard-rss N=%d (%s, run %d): %w", n, side, i+1, err)
				}
				if digest == "" {
					digest = res.Digest
				} else if res.Digest != digest {
					return nil, fmt.Errorf("shard-rss N=%d (%s, run %d): %w", n, side, i+1, ErrMismatch)
				}
				say("N=%d run %d %-8s %6d pods %8.0f ms  peak RSS %6.1f MB", n, i+1, side, want, res.Millis, peak)
				times[side] = append(times[side], res.Millis)
				rss[side] = append(rss[side], peak)
			}
		}
		oursRSS[n] = rss[Ours]
		reports = append(reports,
			pairReport(fmt.Sprintf("shard-rss-n%d", n), "MB", 0.6, rss[Ours], rss[ClientGo]),
			pairReport(fmt.Sprintf("shard-sync-n%d", n), "ms", 0.6, times[Ours], times[ClientGo]))
	}
	if base, ok := oursRSS[1]; ok {
		for _, n := range opts.Replicas {
			if n > 1 {
				reports = append(reports, pairReport(fmt.Sprintf("shard-rss-n%d-vs-n1", n), "MB", shardVsN1Target/float64(n), oursRSS[n], base))
			}
		}
	}

	conv, err := measureConverge(ctx, opts, self, ours, kubeconfig, cs, countIn, say)
	if err != nil {
		return nil, err
	}
	return append(reports, conv), nil
}

// pairReport is a Report of ours against other, with an at-most target.
func pairReport(name, unit string, target float64, ours, other []float64) Report {
	r := Report{Name: name, Unit: unit, Target: Target{Op: AtMost, Value: target}.String(),
		Ours: Summarize(ours), ClientGo: Summarize(other)}
	r.Ratio = r.Ours.Median / r.ClientGo.Median
	r.Met = r.Ratio <= target
	return r
}

// runShardChild syncs set's pods through side in a child process: bin,
// cmd/shardchild for Ours, the bench binary for ClientGo.
func runShardChild(ctx context.Context, bin string, side Side, kubeconfig string, set shard.Set, want int) (ChildResult, float64, error) {
	run := childRun{args: []string{bin}, env: childEnv(
		ChildShardSideEnv, string(side),
		ChildKubeconfigEnv, kubeconfig,
		ChildShardEnv, set.String(),
		ChildShardWantEnv, strconv.Itoa(want))}
	if side == Ours {
		run = childRun{args: []string{bin, "-kubeconfig", kubeconfig, "-shard", set.String(), "-want", strconv.Itoa(want)}}
	}
	res, _, err := runChildJSON[ChildResult](ctx, run)
	return res, float64(res.PeakRSSKB) / 1024, err
}

// buildShardChild builds cmd/shardchild of this bench module (found
// through the kinformer module it replaces, as buildKinformer does) into
// dir and returns its path.
func buildShardChild(ctx context.Context, dir string) (string, error) {
	list := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/kinformer/kinformer")
	root, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("find the kinformer module (run from bench/): %w", err)
	}
	bin := filepath.Join(dir, "shardchild")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/shardchild")
	build.Dir = filepath.Join(strings.TrimSpace(string(root)), "bench")
	if b, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build cmd/shardchild: %w: %s", err, b)
	}
	return bin, nil
}

// RunShardChild is a shard child's whole job in the bench binary: a
// shard-rss sync of client-go's side (ChildShardSideEnv; kinformer's side
// is cmd/shardchild) or a shard-converge replica (ChildReplicaEnv). It
// returns false at once in any other process. A command calls it first
// thing in main, with RunChild.
func RunShardChild(ctx context.Context) (bool, error) {
	if id := os.Getenv(ChildReplicaEnv); id != "" {
		return true, runReplica(ctx, id, os.Getenv(ChildKubeconfigEnv))
	}
	side := Side(os.Getenv(ChildShardSideEnv))
	if side == "" {
		return false, nil
	}
	if side != ClientGo {
		return true, fmt.Errorf("shard side %q: the bench binary runs client-go's side only (kinformer's is cmd/shardchild)", side)
	}
	set, err := shard.ParseSet(os.Getenv(ChildShardEnv))
	if err != nil {
		return true, err
	}
	want, err := strconv.Atoi(os.Getenv(ChildShardWantEnv))
	if err != nil {
		return true, fmt.Errorf("%s: %w", ChildShardWantEnv, err)
	}
	res, err := syncShardClientGo(ctx, os.Getenv(ChildKubeconfigEnv), set, want)
	if err != nil {
		return true, err
	}
	if kb, ok := readVmHWM("/proc/self/status"); ok {
		res.PeakRSSKB = kb
	}
	return true, json.NewEncoder(os.Stdout).Encode(res)
}

// syncShardClientGo times client-go's informer of set's pods until its
// handler has been handed want pods.
func syncShardClientGo(ctx context.Context, kubeconfig string, set shard.Set, want int) (ChildResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return ChildResult{}, err
	}
	start := time.Now()
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return ChildResult{}, err
	}
	seen := podsync.NewCounter(want)
	selector := set.Selector()
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.ShardSelector = selector }))
	defer func() { cancel(); f.Shutdown() }()
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cgcache.ResourceEventHandlerFuncs{AddFunc: func(any) { seen.Add() }}); err != nil {
		return ChildResult{}, err
	}
	f.Start(ctx.Done())
	if err := seen.Wait(ctx); err != nil {
		return ChildResult{}, err
	}
	elapsed := time.Since(start)
	var pods []*corev1.Pod
	for _, o := range inf.GetIndexer().List() {
		pods = append(pods, o.(*corev1.Pod))
	}
	digest, err := podsync.Check("client-go", pods, set, want)
	if err != nil {
		return ChildResult{}, err
	}
	return ChildResult{Millis: float64(elapsed.Microseconds()) / 1e3, Digest: digest}, nil
}

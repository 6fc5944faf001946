// Command crbench measures one controller-runtime controller (package
// podsummary, unchanged) on controller-runtime's default cache and on
// kinformer's, against a local control plane holding many pods: the time from
// the manager's start until its cache has synced and until every app (10
// pods) has been reconciled once (the "sync" line), and the peak resident
// memory of the process. Each run is a process of its own (the same
// binary, re-executed), so that peak RSS is the kernel's figure for that run
// alone (VmHWM, read by the child itself); sides alternate.
//
//	cd integrations/controllerruntime && go run ./cmd/crbench [-pods 20000] [-count 5]
//
// It prints, per measure, min/median/max of each side and then one line
//
//	NAME ours=… clientgo=… ratio=… target=<=…
//
// in the form of the project's other benchmarks, where "clientgo" is the
// comparison side: here controller-runtime's default cache (built on
// client-go's informers). ratio is ours/theirs of the medians. It also checks
// that both sides' controllers saw the same thing for every pod.
//
// A third side runs package podview's reconciler (the same summaries, read
// from pod views) on kinformer's cache, which then caches only the views; it
// prints its peak RSS against controller-runtime's default cache
// (controller-runtime-view-rss) and its time until every app was reconciled,
// with the process's CPU (user+system) beside each side's time.
//
// A fifth side, shard3, runs three manager processes sharing the pods
// (controllerruntime.Options.Shards) and prints the largest one's peak RSS
// against the unsharded controller-runtime manager's
// (controller-runtime-shard3-rss; see shard3.go). -only shard3 runs that
// line alone (its side and controller-runtime's).
//
// A fourth side restarts that view reconciler from a checkpoint of its
// cache (controllerruntime.Options.Checkpoints) written by a first,
// uncounted run, and prints its time until every app was reconciled
// against controller-runtime's default cache started cold
// (controller-runtime-warm-restart-time; see warm.go).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kinformer/kinformer/integrations/controllerruntime"
	"github.com/kinformer/kinformer/integrations/controllerruntime/example/podsummary"
	"github.com/kinformer/kinformer/integrations/controllerruntime/example/podview"
	"github.com/kinformer/kinformer/testenv"
)

// childEnv names the side a re-executed child runs; its kubeconfig and pod
// count follow in childKubeconfig and childPods.
const (
	childEnv        = "KINFORMER_CRBENCH_SIDE"
	childKubeconfig = "KINFORMER_CRBENCH_KUBECONFIG"
	childPods       = "KINFORMER_CRBENCH_PODS"
	// profileEnv, when set to a directory, makes each child write a CPU
	// profile of its run and a heap profile taken once every pod has been
	// reconciled (after a GC) there, named after its side.
	profileEnv = "KINFORMER_CRBENCH_PROFILE"
)

const (
	ours   = "kinformer"
	theirs = "controller-runtime"
	// view is podview's reconciler on kinformer's cache, caching only
	// pod views.
	view = "kinformer-view"
)

// childResult is what a child prints on its standard output.
type childResult struct {
	Millis     float64 `json:"millis"`      // until every app was reconciled
	SyncMillis float64 `json:"sync_millis"` // until the cache synced
	Digest     string  `json:"digest"`
	// PeakRSSKB is the child's own peak resident set (VmHWM of
	// /proc/self/status), 0 where there is none. The kernel's rusage of
	// a child is no good here: it starts at the parent's RSS when forked.
	PeakRSSKB int64 `json:"peak_rss_kb"`
	// Resumed says that the warm side's informers all started from a
	// checkpoint the server confirmed (see resumedFresh).
	Resumed bool `json:"resumed,omitempty"`
	// Pods and Apps are what a shard3 child cached and reconciled: its
	// share; CPUMillis the CPU (user+system) it had used by then.
	Pods      int     `json:"pods,omitempty"`
	Apps      int     `json:"apps,omitempty"`
	CPUMillis float64 `json:"cpu_millis,omitempty"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var err error
	if side := os.Getenv(childEnv); side != "" {
		err = child(ctx, side)
	} else {
		err = parent(ctx)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "crbench:", err)
		os.Exit(1)
	}
}

func parent(ctx context.Context) error {
	pods := flag.Int("pods", 20000, "pods to create and reconcile")
	count := flag.Int("count", 5, "runs per side")
	only := flag.String("only", "", `run only the sides of one line: "shard3" (controller-runtime-shard3-rss)`)
	flag.Parse()
	if *only != "" && *only != "shard3" {
		return fmt.Errorf("-only %q: the one line that can be run alone is shard3", *only)
	}
	var kubeconfig string
	if f := flag.Lookup("kubeconfig"); f != nil { // controller-runtime's flag
		kubeconfig = f.Value.String()
	}
	if kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "starting etcd and kube-apiserver (testenv)")
		// ShardedListAndWatch on, so that the shard3 side's ranges are
		// filtered by the apiserver; requests without a shard selector, the
		// other sides', are served as without it.
		env, err := testenv.Start(ctx, testenv.Options{Build: testenv.BuildOptions{Progress: os.Stderr},
			FeatureGates: map[string]bool{"ShardedListAndWatch": true}})
		if err != nil {
			return err
		}
		defer env.Stop()
		kubeconfig = env.KubeconfigPath()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// Creating the pods is 2 requests per pod: lift client-go's default limit
	// of 5 requests per second (the measured children keep their defaults).
	fast := rest.CopyConfig(cfg)
	fast.QPS, fast.Burst = 2000, 4000
	cs, err := kubernetes.NewForConfig(fast)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "creating %d pods\n", *pods)
	start := time.Now()
	if err := podsummary.Populate(ctx, cs, "crbench", *pods); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "created in %v\n", time.Since(start).Round(time.Second))
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if *only == "shard3" {
		return parentShard3(ctx, self, kubeconfig, *pods, *count)
	}
	dir, err := os.MkdirTemp("", "crbench-checkpoints-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	os.Setenv(checkpointEnv, dir) // the children inherit it
	if err := writeCheckpoint(ctx, self, kubeconfig, *pods); err != nil {
		return err
	}
	millis := map[string][]float64{}
	syncMillis := map[string][]float64{}
	rss := map[string][]float64{}
	cpu := map[string][]float64{}
	digests := map[string]string{}
	for i := range *count {
		for _, side := range []string{theirs, ours, view, viewWarm} {
			res, mb, cpuMillis, err := runChild(ctx, self, side, kubeconfig, *pods)
			if err != nil {
				return fmt.Errorf("run %d, %s: %w", i+1, side, err)
			}
			fmt.Fprintf(os.Stderr, "run %d %-18s cache synced %6.0f ms, all reconciled %6.0f ms, peak RSS %4.0f MB, CPU %6.0f ms\n", i+1, side, res.SyncMillis, res.Millis, mb, cpuMillis)
			cpu[side] = append(cpu[side], cpuMillis)
			millis[side] = append(millis[side], res.Millis)
			syncMillis[side] = append(syncMillis[side], res.SyncMillis)
			rss[side] = append(rss[side], mb)
			if side == viewWarm && !res.Resumed {
				return fmt.Errorf("run %d, %s: the informers did not all start from the checkpoint with the server confirming it", i+1, side)
			}
			if d, ok := digests[side]; ok && d != res.Digest {
				return fmt.Errorf("%s saw different pods in two runs", side)
			}
			digests[side] = res.Digest
		}
		if err := runShard3Once(ctx, self, kubeconfig, *pods, i, millis, rss, cpu); err != nil {
			return err
		}
	}
	if digests[ours] != digests[theirs] {
		return errors.New("the two caches' controllers saw different pods")
	}
	if digests[view] != digests[theirs] {
		return errors.New("the view reconciler saw different pods than the pod reconciler")
	}
	if digests[viewWarm] != digests[theirs] {
		return errors.New("the view reconciler restarted from a checkpoint saw different pods than the pod reconciler")
	}
	fmt.Println("same reconciles on both caches: yes")
	report(fmt.Sprintf("controller-runtime-cache-sync-%d-pods", *pods), "ms", syncMillis, 0.6)
	report(fmt.Sprintf("controller-runtime-sync-%d-pods", *pods), "ms", millis, 0.6)
	report(fmt.Sprintf("controller-runtime-peak-rss-%d-pods", *pods), "MB", rss, 0.6)
	fmt.Println("same reconciles on the view side: yes")
	vLo, vMed, vHi := stats(millis[view])
	vcLo, vcMed, vcHi := stats(cpu[view])
	tLo, tMed, tHi := stats(millis[theirs])
	tcLo, tcMed, tcHi := stats(cpu[theirs])
	fmt.Printf("# controller-runtime-view-reconciled-%d-pods: kinformer view min/median/max %.0f/%.0f/%.0f ms (client CPU %.0f/%.0f/%.0f ms), controller-runtime %.0f/%.0f/%.0f ms (client CPU %.0f/%.0f/%.0f ms)\n",
		*pods, vLo, vMed, vHi, vcLo, vcMed, vcHi, tLo, tMed, tHi, tcLo, tcMed, tcHi)
	rLo, rMed, rHi := stats(rss[view])
	tLo, tMed, tHi = stats(rss[theirs])
	fmt.Printf("# controller-runtime-view-rss: kinformer view min/median/max %.0f/%.0f/%.0f MB, controller-runtime %.0f/%.0f/%.0f MB\n", rLo, rMed, rHi, tLo, tMed, tHi)
	fmt.Printf("controller-runtime-view-rss ours=%.0fMB clientgo=%.0fMB ratio=%.2f target=<=0.15\n", rMed, tMed, rMed/tMed)
	fmt.Println("same reconciles after a warm restart: yes")
	reportWarm(millis, cpu)
	reportShard3(rss, millis, cpu)
	return nil
}

// stats returns the min, median and max of v.
func stats(v []float64) (lo, med, hi float64) {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[0], s[len(s)/2], s[len(s)-1]
}

// report prints min/median/max of each side and the ratio line.
func report(name, unit string, values map[string][]float64, target float64) {
	oLo, oMed, oHi := stats(values[ours])
	tLo, tMed, tHi := stats(values[theirs])
	fmt.Printf("# %s: kinformer min/median/max %.0f/%.0f/%.0f %s, controller-runtime %.0f/%.0f/%.0f %s\n",
		name, oLo, oMed, oHi, unit, tLo, tMed, tHi, unit)
	fmt.Printf("%s ours=%.0f%s clientgo=%.0f%s ratio=%.2f target=<=%.1f\n", name, oMed, unit, tMed, unit, oMed/tMed, target)
}

// runChild runs side in a child process and returns its result, its peak RSS
// in MB and the CPU (user+system) it used in ms.
func runChild(ctx context.Context, self, side, kubeconfig string, pods int) (childResult, float64, float64, error) {
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), childEnv+"="+side, childKubeconfig+"="+kubeconfig, childPods+"="+strconv.Itoa(pods))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return childResult{}, 0, 0, err
	}
	var res childResult
	if err := json.Unmarshal(out, &res); err != nil {
		return childResult{}, 0, 0, fmt.Errorf("child output %q: %w", out, err)
	}
	cpuMillis := float64((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Microseconds()) / 1e3
	if res.PeakRSSKB > 0 {
		return res, float64(res.PeakRSSKB) / 1024, cpuMillis, nil
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return childResult{}, 0, 0, errors.New("no peak RSS for the child")
	}
	return res, float64(ru.Maxrss) / 1024, cpuMillis, nil // Maxrss is in KB on Linux
}

func child(ctx context.Context, side string) error {
	ctrl.SetLogger(logr.Discard())
	pods, err := strconv.Atoi(os.Getenv(childPods))
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(childKubeconfig))
	if err != nil {
		return err
	}
	if side == shard3 {
		return shard3Child(ctx, cfg)
	}
	var newCache cache.NewCacheFunc
	var warmMetrics *prometheus.Registry
	run := podsummary.Run
	switch side {
	case ours:
		newCache = controllerruntime.New
	case view:
		newCache = controllerruntime.New
		run = podview.RunView
	case viewWarm:
		if newCache, warmMetrics, err = warmCache(); err != nil {
			return err
		}
		run = podview.RunView
	}
	if dir := os.Getenv(profileEnv); dir != "" {
		f, err := os.Create(filepath.Join(dir, side+".cpu.pprof"))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	res, err := run(ctx, cfg, newCache, pods/podsummary.PodsPerApp)
	if err != nil {
		return err
	}
	if dir := os.Getenv(profileEnv); dir != "" {
		runtime.GC()
		f, err := os.Create(filepath.Join(dir, side+".heap.pprof"))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			return err
		}
	}
	var resumed bool
	if warmMetrics != nil {
		if resumed, err = resumedFresh(warmMetrics); err != nil {
			return err
		}
	}
	h := sha256.New()
	keys := make([]string, 0, len(res.Summaries))
	for k := range res.Summaries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%s %s\n", k, res.Summaries[k])
	}
	return json.NewEncoder(os.Stdout).Encode(childResult{
		PeakRSSKB:  peakRSSKB(),
		Millis:     float64(res.Elapsed.Microseconds()) / 1e3,
		SyncMillis: float64(res.Synced.Microseconds()) / 1e3,
		Digest:     hex.EncodeToString(h.Sum(nil)),
		Resumed:    resumed,
	})
}

// peakRSSKB returns this process's peak resident set size in KB, from the
// VmHWM line of /proc/self/status, or 0 where there is no such file.
func peakRSSKB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kinformer/kinformer/integrations/controllerruntime"
	"github.com/kinformer/kinformer/integrations/controllerruntime/example/podsummary"
	"github.com/kinformer/kinformer/shard/replicas"
)

// The shard3 side: three manager processes, each with kinformer's cache
// sharding pods (controllerruntime.Options.Shards, Leases in the
// namespace "default") and package podsummary's reconciler, unchanged, started
// together. Each runs until the three have settled (every range claimed
// once, as the split of the three assigns it) and it has reconciled every
// app with a pod in its share; it then reads its peak RSS and the CPU it
// has used, prints its result and waits for the parent to read the
// others' before it stops (the three stop together), so that no replica
// takes over another's share before all are measured, nor after.
// The line compares the largest of the three peaks with one unsharded
// manager on controller-runtime's default cache (the "controller-runtime"
// side): controller-runtime-shard3-rss.
const (
	shard3 = "kinformer-shard3"
	// shardIDEnv and shardGroupEnv give a shard3 child its identity and
	// its group (one per run, so that no run meets another's Leases).
	shardIDEnv    = "KINFORMER_CRBENCH_SHARD_ID"
	shardGroupEnv = "KINFORMER_CRBENCH_SHARD_GROUP"
	// shardLogEnv, when set (to anything), makes each shard3 child log its
	// group's changes (members, ranges claimed and released) and its
	// resident set every 250 ms to its standard error, with times: to see
	// when a replica's peak comes and what it owned then.
	shardLogEnv   = "KINFORMER_CRBENCH_SHARD_LOG"
	shardReplicas = 3
	// leaseNamespace holds the Leases (the pods are in podsummary.Populate's
	// namespaces).
	leaseNamespace = "default"
)

// runShard3 runs the three children of one shard3 run and returns each
// one's result, peak RSS (MB) and CPU (ms).
func runShard3(ctx context.Context, self, kubeconfig string, pods, run int) ([]childResult, []float64, []float64, error) {
	group := fmt.Sprintf("crbench-shard3-%d-%d", os.Getpid(), run)
	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	var procs []proc
	defer func() {
		for _, p := range procs {
			p.stdin.Close()
			_ = p.cmd.Wait()
		}
	}()
	for i := range shardReplicas {
		cmd := exec.CommandContext(ctx, self)
		cmd.Env = append(os.Environ(), childEnv+"="+shard3, childKubeconfig+"="+kubeconfig, childPods+"="+strconv.Itoa(pods),
			shardIDEnv+"="+fmt.Sprintf("m%d", i), shardGroupEnv+"="+group)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, nil, nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, nil, nil, err
		}
		procs = append(procs, proc{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)})
	}
	results := make([]childResult, len(procs))
	for i, p := range procs {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			return nil, nil, nil, fmt.Errorf("shard child %d: %w", i, err)
		}
		if err := json.Unmarshal(line, &results[i]); err != nil {
			return nil, nil, nil, fmt.Errorf("shard child %d output %q: %w", i, line, err)
		}
	}
	// Every child is measured: let them stop, all at once (one by one, the
	// last would take over the others' ranges on the way out).
	for _, p := range procs {
		p.stdin.Close()
	}
	rss := make([]float64, len(procs))
	cpu := make([]float64, len(procs))
	for i, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			return nil, nil, nil, fmt.Errorf("shard child %d: %w", i, err)
		}
		rss[i] = float64(results[i].PeakRSSKB) / 1024
		cpu[i] = results[i].CPUMillis
	}
	procs = nil
	return results, rss, cpu, nil
}

// shard3Child is one shard3 manager (see shard3).
func shard3Child(ctx context.Context, cfg *rest.Config) error {
	id, group := os.Getenv(shardIDEnv), os.Getenv(shardGroupEnv)
	gopts := replicas.GroupOptions{Name: group, Namespace: leaseNamespace, Identity: id}
	if os.Getenv(shardLogEnv) != "" {
		gopts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		logCtx, stopLog := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { logRSS(logCtx, gopts.Logger.With("replica", id)) })
		defer func() {
			stopLog()
			wg.Wait()
		}()
	}
	newCache := controllerruntime.NewCache(controllerruntime.Options{Shards: map[client.Object]controllerruntime.Shard{
		&corev1.Pod{}: {Replicas: gopts},
	}})
	mgr, err := manager.New(cfg, manager.Options{
		NewCache:               newCache,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	summaries := map[string]string{}
	r := &podsummary.Reconciler{Client: mgr.GetClient(), Report: func(req reconcile.Request, s string) {
		mu.Lock()
		summaries[req.String()] = s
		mu.Unlock()
	}}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := r.SetupWithManager(runCtx, mgr); err != nil {
		return err
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var res childResult
	if !mgr.GetCache().WaitForCacheSync(runCtx) {
		return errors.New("cache did not sync")
	}
	res.SyncMillis = float64(time.Since(start).Microseconds()) / 1e3
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	// apps is the share's apps, read once the Leases have settled (the
	// share does not change after that). The check reads the cache once,
	// without deep copies, so that it adds nothing to the peak it measures:
	// reading every pod, copied, at every tick held a second copy of the
	// share and up to doubled the child's peak (a heap profile put more of
	// the child's allocations in that loop than in the reconciler).
	var apps map[string]bool
	for {
		select {
		case err := <-done:
			return fmt.Errorf("manager stopped: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if apps == nil {
			settled, err := leasesSettled(ctx, cs, group)
			if err != nil {
				return err
			}
			if !settled {
				continue
			}
			var list corev1.PodList
			if err := mgr.GetCache().List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
				return err
			}
			apps = map[string]bool{}
			for _, p := range list.Items {
				apps[p.Namespace+"/"+p.Labels["app"]] = true
			}
			res.Pods, res.Apps = len(list.Items), len(apps)
		}
		mu.Lock()
		all := len(apps) > 0
		for a := range apps {
			all = all && summaries[a] != ""
		}
		mu.Unlock()
		if all {
			res.Millis = float64(time.Since(start).Microseconds()) / 1e3
			break
		}
	}
	res.PeakRSSKB = peakRSSKB()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		res.CPUMillis = float64((time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())).Microseconds()) / 1e3
	}
	if dir := os.Getenv(profileEnv); dir != "" {
		runtime.GC()
		f, err := os.Create(filepath.Join(dir, shard3+"-"+id+".heap.pprof"))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			return err
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent has every result
	cancel()
	<-done
	return nil
}

// logRSS logs the process's resident set and the Go heap's figures every
// 250 ms, until ctx is done.
func logRSS(ctx context.Context, log *slog.Logger) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		data, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		for line := range strings.Lines(string(data)) {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				log.Info("rss", "kb", strings.TrimSuffix(strings.TrimSpace(rest), " kB"),
					"heapAllocMB", ms.HeapAlloc>>20, "heapInuseMB", ms.HeapInuse>>20, "heapSysMB", ms.HeapSys>>20,
					"releasedMB", ms.HeapReleased>>20, "nextGCMB", ms.NextGC>>20, "numGC", ms.NumGC, "sysMB", ms.Sys>>20)
			}
		}
	}
}

// leasesSettled reports whether group has shardReplicas Leases, none
// leaving, that claim every range once, as the split of their holders
// assigns it.
func leasesSettled(ctx context.Context, cs kubernetes.Interface, group string) (bool, error) {
	list, err := cs.CoordinationV1().Leases(leaseNamespace).List(ctx, metav1.ListOptions{LabelSelector: replicas.GroupLabel + "=" + group})
	if err != nil {
		return false, err
	}
	if len(list.Items) != shardReplicas {
		return false, nil
	}
	var ids []string
	claims := map[string][]string{} // slot -> holders
	for _, l := range list.Items {
		if l.Spec.HolderIdentity == nil || l.Annotations[replicas.LeavingAnnotation] == "true" {
			return false, nil
		}
		ids = append(ids, *l.Spec.HolderIdentity)
		if r := l.Annotations[replicas.RangesAnnotation]; r != "" {
			for s := range strings.SplitSeq(r, ",") {
				claims[s] = append(claims[s], *l.Spec.HolderIdentity)
			}
		}
	}
	slices.Sort(ids)
	owner := replicas.Assign(ids, replicas.DefaultSlots)
	if len(claims) != len(owner) {
		return false, nil
	}
	for s, id := range owner {
		if !slices.Equal(claims[strconv.Itoa(s)], []string{id}) {
			return false, nil
		}
	}
	return true, nil
}

// reportShard3 prints the shard3 line: the largest of the three sharded
// managers' peak RSS per run against the unsharded manager's.
func reportShard3(rss, millis, cpu map[string][]float64) {
	sLo, sMed, sHi := stats(rss[shard3])
	tLo, tMed, tHi := stats(rss[theirs])
	mLo, mMed, mHi := stats(millis[shard3])
	cLo, cMed, cHi := stats(cpu[shard3])
	tmLo, tmMed, tmHi := stats(millis[theirs])
	tcLo, tcMed, tcHi := stats(cpu[theirs])
	fmt.Printf("# controller-runtime-shard3: largest of three sharded kinformer managers: peak RSS min/median/max %.0f/%.0f/%.0f MB, "+
		"its share reconciled %.0f/%.0f/%.0f ms (client CPU %.0f/%.0f/%.0f ms); one controller-runtime manager, default cache: "+
		"%.0f/%.0f/%.0f MB, all reconciled %.0f/%.0f/%.0f ms (client CPU %.0f/%.0f/%.0f ms)\n",
		sLo, sMed, sHi, mLo, mMed, mHi, cLo, cMed, cHi, tLo, tMed, tHi, tmLo, tmMed, tmHi, tcLo, tcMed, tcHi)
	fmt.Printf("controller-runtime-shard3-rss ours=%.0fMB clientgo=%.0fMB ratio=%.2f target=<=0.4\n", sMed, tMed, sMed/tMed)
}

// runShard3Once runs shard3 once (run i), checks that the three shares
// are disjoint and complete, and notes the largest child's figures.
func runShard3Once(ctx context.Context, self, kubeconfig string, pods, i int, millis, rss, cpu map[string][]float64) error {
	results, mbs, cpus, err := runShard3(ctx, self, kubeconfig, pods, i)
	if err != nil {
		return fmt.Errorf("run %d, %s: %w", i+1, shard3, err)
	}
	total, big := 0, 0
	for k, r := range results {
		total += r.Pods
		if mbs[k] > mbs[big] {
			big = k
		}
		fmt.Fprintf(os.Stderr, "run %d %-18s m%d: %d pods, %d apps, cache synced %6.0f ms, its share reconciled %6.0f ms, peak RSS %4.0f MB, CPU %6.0f ms\n",
			i+1, shard3, k, r.Pods, r.Apps, r.SyncMillis, r.Millis, mbs[k], cpus[k])
	}
	if total != pods {
		return fmt.Errorf("run %d, %s: the three managers cached %d pods, want %d, each once", i+1, shard3, total, pods)
	}
	millis[shard3] = append(millis[shard3], results[big].Millis)
	rss[shard3] = append(rss[shard3], mbs[big])
	cpu[shard3] = append(cpu[shard3], cpus[big])
	return nil
}

// parentShard3 runs the shard3 line alone: controller-runtime's side and
// shard3, alternating, count times each.
func parentShard3(ctx context.Context, self, kubeconfig string, pods, count int) error {
	millis, rss, cpu := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	for i := range count {
		res, mb, cpuMillis, err := runChild(ctx, self, theirs, kubeconfig, pods)
		if err != nil {
			return fmt.Errorf("run %d, %s: %w", i+1, theirs, err)
		}
		fmt.Fprintf(os.Stderr, "run %d %-18s cache synced %6.0f ms, all reconciled %6.0f ms, peak RSS %4.0f MB, CPU %6.0f ms\n", i+1, theirs, res.SyncMillis, res.Millis, mb, cpuMillis)
		millis[theirs] = append(millis[theirs], res.Millis)
		rss[theirs] = append(rss[theirs], mb)
		cpu[theirs] = append(cpu[theirs], cpuMillis)
		if err := runShard3Once(ctx, self, kubeconfig, pods, i, millis, rss, cpu); err != nil {
			return err
		}
	}
	reportShard3(rss, millis, cpu)
	return nil
}

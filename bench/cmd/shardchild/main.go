// Command shardchild is kinformer's side of shard-rss (see
// scenario.RunShard, which builds and starts it): one replica's informer
// of the pods of its shard, timed until its handler has been handed every
// one, then its result printed as one JSON line (podsync.Result) with its
// peak RSS. It is a binary of its own, as cmd/baseline/ours is, so that
// it carries only what a kinformer replica links: the bench binary also
// links client-go's scheme and informers for the other side.
//
//	shardchild -kubeconfig FILE -shard SET -want N
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/bench/internal/podsync"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/shard"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	set := flag.String("shard", "", "the shard to sync (shard.ParseSet's form)")
	want := flag.Int("want", -1, "how many pods the shard holds")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *kubeconfig, *set, *want)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "shardchild:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, setText string, want int) error {
	if kubeconfig == "" || want < 0 {
		return fmt.Errorf("-kubeconfig and -want are required")
	}
	set, err := shard.ParseSet(setText)
	if err != nil {
		return err
	}
	res, err := syncShard(ctx, kubeconfig, set, want)
	if err != nil {
		return err
	}
	if kb, ok := vmHWM(); ok {
		res.PeakRSSKB = kb
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// syncShard times a kube source of set's pods under a shared informer
// with one handler until the handler has been handed want pods.
func syncShard(ctx context.Context, kubeconfig string, set shard.Set, want int) (podsync.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: kubeconfig})
	if err != nil {
		return podsync.Result{}, err
	}
	start := time.Now()
	src, err := kube.Source[*corev1.Pod](ctx, cfg, kube.SourceOptions{Selection: kube.Selection{Shard: set}})
	if err != nil {
		return podsync.Result{}, err
	}
	inf, err := informer.NewShared(informer.Options[*corev1.Pod]{Source: src})
	if err != nil {
		return podsync.Result{}, err
	}
	seen := podsync.NewCounter(want)
	if _, err := inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{AddFunc: func(*corev1.Pod, bool) { seen.Add() }},
		informer.HandlerOptions{}); err != nil {
		return podsync.Result{}, err
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = inf.Run(ctx) }() // Exits when ctx ends (cancel below).
	defer func() { cancel(); <-done }()
	if err := seen.Wait(ctx); err != nil {
		return podsync.Result{}, err
	}
	elapsed := time.Since(start)
	digest, err := podsync.Check("kinformer", inf.Cache().List(), set, want)
	if err != nil {
		return podsync.Result{}, err
	}
	return podsync.Result{Millis: float64(elapsed.Microseconds()) / 1e3, Digest: digest}, nil
}

// vmHWM returns this process's peak resident set (VmHWM of
// /proc/self/status) in KB.
func vmHWM() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

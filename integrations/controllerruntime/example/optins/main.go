// Command optins runs a controller-runtime controller that reads pod views
// (package podsummary's ViewReconciler) on kinformer's cache with its
// opt-ins: the manager caches views instead of pods, saves them to a
// checkpoint directory, reports sync progress on a metrics registry, and on
// its second run starts warm from the checkpoint.
//
//	cd integrations/controllerruntime && go run ./example/optins [-pods 2000]
//
// It starts testenv's etcd and kube-apiserver (built and cached on first
// use) and stops them at the end.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kinformer/kinformer/integrations/controllerruntime"
	"github.com/kinformer/kinformer/integrations/controllerruntime/example/podsummary"
	"github.com/kinformer/kinformer/integrations/controllerruntime/example/podview"
	"github.com/kinformer/kinformer/testenv"
)

func main() {
	pods := flag.Int("pods", 2000, "how many pods to create (in apps of 10, each reconciled)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, *pods)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "optins:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, pods int) error {
	ctrl.SetLogger(logr.Discard())
	fmt.Println("starting etcd and kube-apiserver (testenv)")
	env, err := testenv.Start(ctx, testenv.Options{Build: testenv.BuildOptions{Progress: os.Stderr}})
	if err != nil {
		return err
	}
	defer env.Stop()
	cfg := env.RESTConfig()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	fmt.Printf("creating %d pods\n", pods)
	if err := podsummary.Populate(ctx, cs, "optins", pods); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "optins-checkpoints-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, run := range []string{"cold start", "warm restart"} {
		// Each run is a new manager, as a restarted process would make;
		// a manager would pass controller-runtime's metrics.Registry.
		reg := prometheus.NewRegistry()
		newCache := controllerruntime.NewCache(controllerruntime.Options{
			Checkpoints: controllerruntime.Checkpoints{Dir: dir, Interval: time.Second},
			Metrics:     reg,
		})
		res, err := podview.RunView(ctx, cfg, newCache, pods/podsummary.PodsPerApp)
		if err != nil {
			return fmt.Errorf("%s: %w", run, err)
		}
		fmt.Printf("%-13s synced in %v, %d apps reconciled in %v; %s\n", run+":", res.Synced.Round(time.Millisecond),
			len(res.Summaries), res.Elapsed.Round(time.Millisecond), checkpointLoads(reg))
		if run == "cold start" {
			// Give the checkpoint time to be written before the restart.
			time.Sleep(2 * time.Second)
		}
	}
	return nil
}

// checkpointLoads says how many checkpoints the run's informers loaded.
func checkpointLoads(reg *prometheus.Registry) string {
	families, err := reg.Gather()
	if err != nil {
		return err.Error()
	}
	for _, f := range families {
		if f.GetName() == "kinformer_informer_checkpoint_loads_total" {
			n := 0.0
			for _, m := range f.GetMetric() {
				n += m.GetCounter().GetValue()
			}
			return fmt.Sprintf("%v checkpoint(s) loaded", n)
		}
	}
	return "no checkpoint loaded"
}

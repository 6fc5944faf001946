// Command example runs one unchanged controller-runtime controller
// (package podsummary) on a local control plane twice: on controller-runtime's
// default cache, then on kinformer's (manager.Options{NewCache:
// controllerruntime.New}), and checks that both reconciled every pod and saw
// the same thing.
//
//	cd integrations/controllerruntime && go run ./example [-pods 2000] [-kubeconfig PATH]
//
// Without -kubeconfig it starts testenv's etcd and kube-apiserver (built and
// cached on first use) and stops them at the end. It exits 1 if the two runs
// differ.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kinformer/kinformer/integrations/controllerruntime"
	"github.com/kinformer/kinformer/integrations/controllerruntime/example/podsummary"
	"github.com/kinformer/kinformer/testenv"
)

func main() {
	pods := flag.Int("pods", 2000, "how many pods to create (in apps of 10, each reconciled)")
	// -kubeconfig is controller-runtime's own flag: a cluster to use (pods
	// are created in namespaces example-N) instead of starting one.
	flag.Parse()
	var kubeconfig string
	if f := flag.Lookup("kubeconfig"); f != nil {
		kubeconfig = f.Value.String()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, *pods, kubeconfig)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, pods int, kubeconfig string) error {
	ctrl.SetLogger(logr.Discard())
	var cfg *rest.Config
	if kubeconfig != "" {
		var err error
		if cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
			return err
		}
	} else {
		fmt.Println("starting etcd and kube-apiserver (testenv)")
		env, err := testenv.Start(ctx, testenv.Options{Build: testenv.BuildOptions{Progress: os.Stderr}})
		if err != nil {
			return err
		}
		defer env.Stop()
		cfg = env.RESTConfig()
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	fmt.Printf("creating %d pods\n", pods)
	if err := podsummary.Populate(ctx, cs, "example", pods); err != nil {
		return err
	}
	var results [2]podsummary.Result
	for i, side := range []struct {
		name     string
		newCache cache.NewCacheFunc
	}{{"controller-runtime's cache", nil}, {"kinformer's cache", controllerruntime.New}} {
		if results[i], err = podsummary.Run(ctx, cfg, side.newCache, pods/podsummary.PodsPerApp); err != nil {
			return fmt.Errorf("%s: %w", side.name, err)
		}
		fmt.Printf("%-27s cache synced in %v, %d apps reconciled in %v\n", side.name+":",
			results[i].Synced.Round(time.Millisecond), len(results[i].Summaries), results[i].Elapsed.Round(time.Millisecond))
	}
	differ := 0
	for k, v := range results[0].Summaries {
		if w := results[1].Summaries[k]; w != v {
			if differ < 5 {
				fmt.Printf("  %s: %q vs %q\n", k, v, w)
			}
			differ++
		}
	}
	if differ > 0 || len(results[0].Summaries) != len(results[1].Summaries) {
		return fmt.Errorf("the reconciles differ for %d apps", differ)
	}
	fmt.Println("same reconciles: every app, the same summary on both caches")
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kinformer/kinformer/integrations/controllerruntime"
)

// The warm-restart side: podview's reconciler on kinformer's cache with
// checkpoints (controllerruntime.Options.Checkpoints), restarted from the
// checkpoint of the pod views that an earlier run of the same manager
// wrote. Its time is compared with controller-runtime's default cache
// started cold (the theirs side, run in the same rounds), in the line
//
//	controller-runtime-warm-restart-time ours=…ms clientgo=…ms ratio=R target=<=0.5
//
// The first run of the side writes the checkpoint and is not counted; the
// counted runs must each have started from it with the server confirming
// its resource version (a fresh resume: no list made), or the command
// fails, so that a refused or expired checkpoint cannot pass for a warm
// restart. A resumed informer writes no new checkpoint when it stops
// unless its cache changed, so every counted run starts from the one the
// first run wrote, a few minutes old at most, well inside the
// apiserver's watch history.
const (
	viewWarm = "kinformer-view-warm"
	// checkpointEnv names the checkpoint directory of the warm side.
	checkpointEnv = "KINFORMER_CRBENCH_CHECKPOINTS"
	// warmTarget is the target for the warm restart's time
	// against a cold start of controller-runtime's default cache.
	warmTarget = 0.5
)

// warmCache returns the cache of the warm side, with checkpoints in the
// directory checkpointEnv names, and the registry its metrics go to.
func warmCache() (cache.NewCacheFunc, *prometheus.Registry, error) {
	dir := os.Getenv(checkpointEnv)
	if dir == "" {
		return nil, nil, errors.New(checkpointEnv + " is not set")
	}
	reg := prometheus.NewRegistry()
	return controllerruntime.NewCache(controllerruntime.Options{
		Checkpoints: controllerruntime.Checkpoints{Dir: dir},
		Metrics:     reg,
	}), reg, nil
}

// resumedFresh reports whether the run whose metrics reg holds started
// every informer from a checkpoint the server confirmed: checkpoints
// loaded, none refused, and no list made (an expired checkpoint is
// followed by a list).
func resumedFresh(reg *prometheus.Registry) (bool, error) {
	families, err := reg.Gather()
	if err != nil {
		return false, err
	}
	var loads, refused, lists float64
	for _, f := range families {
		var sum float64
		for _, m := range f.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
		switch f.GetName() {
		case "kinformer_informer_checkpoint_loads_total":
			loads = sum
		case "kinformer_informer_checkpoint_refused_total":
			refused = sum
		case "kinformer_reflector_lists_total":
			lists = sum
		}
	}
	return loads > 0 && refused == 0 && lists == 0, nil
}

// writeCheckpoint runs the warm side once, not counted: a cold start that
// leaves the checkpoint the counted runs start from.
func writeCheckpoint(ctx context.Context, self, kubeconfig string, pods int) error {
	res, _, cpuMillis, err := runChild(ctx, self, viewWarm, kubeconfig, pods)
	if err != nil {
		return fmt.Errorf("checkpoint-writing run: %w", err)
	}
	if res.Resumed {
		return errors.New("checkpoint-writing run: started from a checkpoint already there")
	}
	fmt.Fprintf(os.Stderr, "run 0 %-18s (writes the checkpoint, not counted) all reconciled %6.0f ms, CPU %6.0f ms\n", viewWarm, res.Millis, cpuMillis)
	return nil
}

// reportWarm prints the warm side's times and CPU against the cold
// controller-runtime side's, and the line.
func reportWarm(millis, cpu map[string][]float64) {
	wLo, wMed, wHi := stats(millis[viewWarm])
	wcLo, wcMed, wcHi := stats(cpu[viewWarm])
	tLo, tMed, tHi := stats(millis[theirs])
	tcLo, tcMed, tcHi := stats(cpu[theirs])
	fmt.Printf("# controller-runtime-warm-restart-time: kinformer view from a checkpoint min/median/max %.0f/%.0f/%.0f ms (client CPU %.0f/%.0f/%.0f ms), controller-runtime cold %.0f/%.0f/%.0f ms (client CPU %.0f/%.0f/%.0f ms)\n",
		wLo, wMed, wHi, wcLo, wcMed, wcHi, tLo, tMed, tHi, tcLo, tcMed, tcHi)
	fmt.Printf("controller-runtime-warm-restart-time ours=%.0fms clientgo=%.0fms ratio=%.2f target=<=%.1f\n", wMed, tMed, wMed/tMed, warmTarget)
}

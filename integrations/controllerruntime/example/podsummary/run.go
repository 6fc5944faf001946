package podsummary

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Result is what one run of the controller saw.
type Result struct {
	// Summaries holds the last summary of each reconciled app, by
	// namespace/app.
	Summaries map[string]string
	// Synced is the time from the manager's start until its cache had
	// synced; Elapsed until every wanted app had been reconciled once.
	Synced, Elapsed time.Duration
}

// Run runs a manager with the Reconciler, its cache made by newCache (nil:
// controller-runtime's default), until want apps have been reconciled, and
// returns what it saw. cfg is the
// cluster's config; the manager serves no metrics or probes.
func Run(ctx context.Context, cfg *rest.Config, newCache cache.NewCacheFunc, want int) (Result, error) {
	return RunWith(ctx, cfg, manager.Options{NewCache: newCache}, want, func(mgr manager.Manager, report func(reconcile.Request, string)) interface {
		SetupWithManager(context.Context, ctrl.Manager) error
	} {
		return &Reconciler{Client: mgr.GetClient(), Report: report}
	})
}

// RunWith runs a manager made with opts (metrics, probes and name
// validation off) and the reconciler mk returns, until want apps have been
// reconciled.
func RunWith(ctx context.Context, cfg *rest.Config, opts manager.Options, want int, mk func(manager.Manager, func(reconcile.Request, string)) interface {
	SetupWithManager(context.Context, ctrl.Manager) error
}) (Result, error) {
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	// Several managers run one after the other in one process.
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		return Result{}, err
	}
	var mu sync.Mutex
	res := Result{Summaries: map[string]string{}}
	all := make(chan struct{})
	start := time.Now()
	r := mk(mgr, func(req reconcile.Request, summary string) {
		mu.Lock()
		defer mu.Unlock()
		res.Summaries[req.String()] = summary
		if len(res.Summaries) == want && res.Elapsed == 0 {
			res.Elapsed = time.Since(start)
			close(all)
		}
	})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := r.SetupWithManager(runCtx, mgr); err != nil {
		return Result{}, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	synced := make(chan struct{})
	go func() { // ends with the manager's cache: synced or runCtx done
		defer close(synced)
		if mgr.GetCache().WaitForCacheSync(runCtx) {
			mu.Lock()
			res.Synced = time.Since(start)
			mu.Unlock()
		}
	}()
	defer func() { cancel(); <-synced }()
	select {
	case <-all:
	case err := <-done:
		if err == nil {
			err = errors.New("manager stopped before every pod was reconciled")
		}
		return Result{}, err
	case <-ctx.Done():
		cancel()
		<-done
		return Result{}, ctx.Err()
	}
	cancel()
	if err := <-done; err != nil {
		return Result{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	return res, nil
}

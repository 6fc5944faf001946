package cli

import (
	"context"
	"sync"
	"time"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// StatsOptions are the flags of `kinformer stats`.
type StatsOptions struct {
	// Interval is the refresh period. Default 1s.
	Interval time.Duration
	// Duration, when positive, ends the command after that long.
	Duration time.Duration
	// Once prints one sample per informer after the sync (and one
	// interval, to measure rates) and exits.
	Once bool
	// Full caches whole objects (the dynamic source) instead of their
	// metadata only.
	Full bool
	// HandlerDelay makes the command's handler take this long per
	// notification, to show a slow handler's backlog and merging.
	HandlerDelay time.Duration
}

// RunStats runs an informer per resource in args and shows, every
// interval, what each is doing: a redrawn table on a terminal, one
// parseable line per informer otherwise (see formatStatsLine). It returns
// when ctx is done, opts.Duration has passed, or after one sample with
// opts.Once.
func RunStats(ctx context.Context, streams Streams, global *GlobalOptions, opts StatsOptions, args []string) error {
	sess, err := global.connect(ctx, args)
	if err != nil {
		return err
	}
	if opts.Full {
		return runStats(ctx, streams, global, opts, sess, kube.Dynamic)
	}
	return runStats(ctx, streams, global, opts, sess, kube.Metadata)
}

func runStats[T labeled](ctx context.Context, streams Streams, global *GlobalOptions, opts StatsOptions, sess *session, newSource newSourceFunc[T]) error {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	provider, stopMetrics, err := serveMetrics(global.MetricsAddr, streams.ErrOut)
	if err != nil {
		return err
	}
	defer stopMetrics()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, err := newGroup(groupOptions[T]{
		session:   sess,
		global:    global,
		newSource: newSource,
		collector: newCollector(provider),
		handler:   slowHandler[T](ctx, opts.HandlerDelay),
		warnings:  streams.ErrOut,
		ctxErr:    ctx.Err,
	})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { g.run(ctx) })
	defer wg.Wait()
	defer cancel()

	// Fail early on what retrying will not fix, but otherwise show the
	// sync as it happens: the view has a column for it.
	syncErr := make(chan error, 1)
	// Owned here: waitSynced returns when every informer syncs, one fails
	// or ctx ends (cancelled by the deferred cancel at the latest), and
	// nothing else sends on syncErr.
	wg.Go(func() { syncErr <- g.waitSynced(ctx, global.SyncTimeout, sess.cfg.Host) })

	var expire <-chan time.Time
	if opts.Duration > 0 {
		t := time.NewTimer(opts.Duration)
		defer t.Stop()
		expire = t.C
	}
	view := newStatsView(streams)
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	sampler := newStatsSampler(g)
	syncedAll := false
	for {
		select {
		case err := <-syncErr:
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			syncedAll = true
			if opts.Once {
				// Reset the rates' start, then sample one interval later.
				sampler.sample(time.Now())
				tick.Reset(opts.Interval)
			}
		case now := <-tick.C:
			if opts.Once && !syncedAll {
				continue
			}
			view.draw(sampler.sample(now))
			if opts.Once && syncedAll {
				return nil
			}
		case <-expire:
			view.draw(sampler.sample(time.Now()))
			return nil
		case <-ctx.Done():
			if !opts.Once {
				view.draw(sampler.sample(time.Now())) // the final state
			}
			return nil
		}
	}
}

// slowHandler returns, for a positive delay, handlers that wait that long
// per notification (or until ctx ends), and nil otherwise.
func slowHandler[T labeled](ctx context.Context, delay time.Duration) func(target) informer.Handler[T] {
	if delay <= 0 {
		return nil
	}
	wait := func() {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return func(target) informer.Handler[T] {
		return informer.HandlerFuncs[T]{
			AddFunc:    func(T, bool) { wait() },
			UpdateFunc: func(T, T) { wait() },
			DeleteFunc: func(T, bool) { wait() },
		}
	}
}

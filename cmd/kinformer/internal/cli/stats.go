package cli

import (
	"context"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// StatsOptions are the flags of `kinformer stats`.
type StatsOptions struct {
	// Interval is the refresh period. Default 1s.
	Interval time.Duration
	// Duration, when positive, ends the command after that long.
	Duration time.Duration
	// Once prints one sample per informer as soon as the sync is done,
	// and exits. Its watch rates are 0: no interval has passed since.
	Once bool
	// Full caches whole objects (the dynamic source) instead of their
	// metadata only.
	Full bool
	// HandlerDelay makes the command's handler take this long per
	// notification, to show a slow handler's backlog and merging.
	HandlerDelay time.Duration
	// Output is -o: "" (a table fitted to the terminal, or kv lines when
	// the output is not a terminal), wide, json or kv.
	Output string
	// CheckpointDir, when set, keeps each informer's cache in a file
	// there, so that the next run starts from it (see package checkpoint);
	// -o wide, json and kv show what each checkpoint did.
	CheckpointDir string
}

// RunStats runs an informer per resource in args and shows, every
// interval, what each is doing: on a terminal a table fitted to its width,
// redrawn in place, with what goes wrong (an outage, a relist) in a status
// area under it; otherwise one parseable line per informer (see
// formatStatsLine), or a JSON object with -o json, and what goes wrong as
// lines on streams.ErrOut. It returns when ctx is done, opts.Duration has
// passed, or after one sample with opts.Once.
func RunStats(ctx context.Context, streams Streams, global *GlobalOptions, opts StatsOptions, args []string) error {
	if err := validStatsOutput(opts.Output); err != nil {
		return err
	}
	sess, err := global.connect(ctx, args)
	if err != nil {
		return err
	}
	if opts.Full {
		return runStats(ctx, streams, global, opts, sess, kube.Source[*unstructured.Unstructured])
	}
	return runStats(ctx, streams, global, opts, sess, kube.Source[*metav1.PartialObjectMetadata])
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
	g, err := newGroup(ctx, groupOptions[T]{
		session:   sess,
		global:    global,
		newSource: newSource,
		collector: newCollector(provider),
		handler:   slowHandler[T](ctx, opts.HandlerDelay),
		warnings:  streams.ErrOut,
		ctxErr:    ctx.Err,

		checkpointDir: opts.CheckpointDir,
	})
	if err != nil {
		return err
	}
	view := newStatsView(streams, opts)
	if view.redraw {
		// The view shows what goes wrong in its status area.
		defer g.health.hold()()
	}
	defer view.close() // after the informers have stopped
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
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	sampler := newStatsSampler(g)
	for {
		select {
		case err := <-syncErr:
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			if opts.Once {
				view.draw(sampler.sample(time.Now()), g.health.statusLines())
				return nil
			}
		case now := <-tick.C:
			if opts.Once {
				continue
			}
			view.draw(sampler.sample(now), g.health.statusLines())
		case <-expire:
			view.draw(sampler.sample(time.Now()), g.health.statusLines())
			return nil
		case <-ctx.Done():
			if !opts.Once {
				view.draw(sampler.sample(time.Now()), g.health.statusLines()) // the final state
			}
			return nil
		}
	}
}

// newStatsView picks how to show frames: a redrawn table on a terminal,
// lines otherwise (kv unless -o says json, or a table that is printed once
// with --once).
func newStatsView(streams Streams, opts StatsOptions) *statsView {
	v := &statsView{w: streams.Out, format: opts.Output, size: terminalSize(streams)}
	if !streams.OutIsTerminal && v.format == statsTableOut {
		v.format = statsKVOut
	}
	v.redraw = streams.OutIsTerminal && !opts.Once && (v.format == statsTableOut || v.format == statsWideOut)
	return v
}

// terminalSize returns a function reading the size of the terminal
// streams.Out is, falling back to streams.Width (or 80) columns and 24
// rows when it cannot be read.
func terminalSize(streams Streams) func() (int, int) {
	return func() (int, int) {
		if f, ok := streams.Out.(*os.File); ok && streams.OutIsTerminal {
			if w, h, err := term.GetSize(int(f.Fd())); err == nil && w > 0 && h > 0 {
				return w, h
			}
		}
		if streams.Width > 0 {
			return streams.Width, 24
		}
		return 80, 24
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

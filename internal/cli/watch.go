package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// WatchOptions are the flags of `kinformer watch`.
type WatchOptions struct {
	// Output is -o: "", wide, name, json or yaml.
	Output string
	// WatchOnly skips the objects that exist when the watch starts.
	WatchOnly bool
	// Duration, when positive, ends the watch after that long.
	Duration time.Duration
}

// RunWatch syncs informers for args, showing progress, prints the objects
// found, then one line (or document) per change until ctx is done or
// opts.Duration passes.
func RunWatch(ctx context.Context, streams Streams, global *GlobalOptions, opts WatchOptions, args []string) error {
	if err := validOutput(opts.Output); err != nil {
		return err
	}
	sess, err := global.connect(ctx, args)
	if err != nil {
		return err
	}
	provider, stopMetrics, err := serveMetrics(global.MetricsAddr, streams.ErrOut)
	if err != nil {
		return err
	}
	defer stopMetrics()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &eventPrinter{
		w:         streams.Out,
		output:    opts.Output,
		watchOnly: opts.WatchOnly,
		layout:    newTableLayout(sess.targets, true, opts.Output == outputWide),
		now:       global.now,
	}
	g, err := newGroup(groupOptions[*unstructured.Unstructured]{
		session:   sess,
		global:    global,
		newSource: kube.Dynamic,
		collector: newCollector(provider),
		handler:   p.handlerFor,
		warnings:  streams.ErrOut,
		ctxErr:    ctx.Err,
	})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { g.run(ctx) })
	defer wg.Wait() // after cancel (deferred later, so run first)
	defer cancel()

	if err := syncWithProgress(ctx, g, streams, global.SyncTimeout, sess.cfg.Host); err != nil {
		return err
	}
	p.flush()
	var expire <-chan time.Time
	if opts.Duration > 0 {
		t := time.NewTimer(opts.Duration)
		defer t.Stop()
		expire = t.C
	}
	select {
	case <-ctx.Done():
	case <-expire:
	case <-p.failed:
	}
	return p.error()
}

// printedEvent is one notification waiting to be printed.
type printedEvent struct {
	target  target
	typ     string
	obj     *unstructured.Unstructured
	initial bool
}

// eventPrinter prints watch notifications. Until flush, it keeps them (the
// progress bar owns the screen); flush prints the initial objects sorted,
// then the changes that came meanwhile in order, and later notifications
// are printed as they come. Handlers of several informers call it
// concurrently.
type eventPrinter struct {
	w         io.Writer
	output    string
	watchOnly bool
	layout    tableLayout
	now       func() time.Time

	// failed is closed on the first write error (for example a closed
	// pipe), which ends the watch.
	failed   chan struct{}
	initOnce sync.Once

	// mu guards the fields below and serializes writes to w.
	mu      sync.Mutex
	flushed bool
	pending []printedEvent
	rows    rowWriter
	err     error
}

func (p *eventPrinter) init() {
	p.initOnce.Do(func() { p.failed = make(chan struct{}) })
}

func (p *eventPrinter) handlerFor(t target) informer.Handler[*unstructured.Unstructured] {
	p.init()
	return informer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(obj *unstructured.Unstructured, initial bool) {
			p.handle(printedEvent{target: t, typ: "ADDED", obj: obj, initial: initial})
		},
		UpdateFunc: func(_, obj *unstructured.Unstructured) {
			p.handle(printedEvent{target: t, typ: "MODIFIED", obj: obj})
		},
		DeleteFunc: func(obj *unstructured.Unstructured, _ bool) {
			p.handle(printedEvent{target: t, typ: "DELETED", obj: obj})
		},
	}
}

func (p *eventPrinter) handle(ev printedEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.flushed {
		p.pending = append(p.pending, ev)
		return
	}
	p.printLocked(ev)
}

// flush prints what was kept during the sync and switches to printing as
// events come.
func (p *eventPrinter) flush() {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	var initial, live []printedEvent
	for _, ev := range p.pending {
		switch {
		case !ev.initial:
			live = append(live, ev)
		case !p.watchOnly:
			initial = append(initial, ev)
		}
	}
	slices.SortStableFunc(initial, func(a, b printedEvent) int {
		return cmp.Or(cmp.Compare(a.target.index, b.target.index),
			cmp.Compare(a.obj.GetNamespace(), b.obj.GetNamespace()),
			cmp.Compare(a.obj.GetName(), b.obj.GetName()))
	})
	p.pending, p.flushed = nil, true
	if p.output == outputTable || p.output == outputWide {
		now := p.now()
		rows := [][]string{p.layout.header()}
		for _, ev := range initial {
			rows = append(rows, p.layout.row(ev.typ, ev.target, ev.obj, now))
		}
		p.rows.w = p.w
		p.rows.fit(rows)
		for _, r := range rows {
			p.check(p.rows.write(r))
		}
		initial = nil
	}
	for _, ev := range append(initial, live...) {
		p.printLocked(ev)
	}
}

func (p *eventPrinter) printLocked(ev printedEvent) {
	if p.err != nil {
		return
	}
	switch p.output {
	case outputName:
		_, err := fmt.Fprintf(p.w, "%s %s\n", ev.typ, kindName(ev.target, ev.obj.GetName()))
		p.check(err)
	case outputJSON:
		p.check(writeJSONLine(p.w, watchEvent{Type: ev.typ, Object: ev.obj.Object}))
	case outputYAML:
		p.check(writeYAMLDoc(p.w, watchEvent{Type: ev.typ, Object: ev.obj.Object}))
	default:
		p.rows.w = p.w
		p.check(p.rows.write(p.layout.row(ev.typ, ev.target, ev.obj, p.now())))
	}
}

// check records the first write error and ends the watch.
func (p *eventPrinter) check(err error) {
	if err != nil && p.err == nil {
		p.err = err
		close(p.failed)
	}
}

func (p *eventPrinter) error() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

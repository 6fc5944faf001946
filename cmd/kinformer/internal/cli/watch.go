package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
//
// Each output reads the cheapest source that serves it (see sourceFor): -o
// name watches metadata only; a table watches the server's Table rendering
// (each event a Table of one row, with its metadata, so kubectl's columns,
// custom resources' printer columns included, are the server's); -o json
// and -o yaml watch whole objects.
func RunWatch(ctx context.Context, streams Streams, global *GlobalOptions, opts WatchOptions, args []string) error {
	if err := validOutput(opts.Output); err != nil {
		return err
	}
	if isTemplateOutput(opts.Output) {
		return &UserError{Message: fmt.Sprintf("watch -o %s: watch prints name, wide, json or yaml; jsonpath and custom-columns are for get", opts.Output)}
	}
	if len(args) == 0 {
		return errNoResource("watch")
	}
	sess, err := global.connect(ctx, args)
	if err != nil {
		return err
	}
	switch sourceFor(opts.Output, nil) {
	case fromMetadata:
		return runWatch(ctx, streams, global, opts, sess, kube.Source[*metav1.PartialObjectMetadata], eventFormat[*metav1.PartialObjectMetadata](nameFormat[*metav1.PartialObjectMetadata]{}))
	case fromTable:
		ts := newTableSources(tableInclude(sess.targets, nil, true, !sess.shard.IsZero()))
		return runWatch(ctx, streams, global, opts, sess, ts.newSource, eventFormat[*tableRow](newTableFormat(ts, sess.targets, opts.Output == outputWide)))
	default:
		return runWatch(ctx, streams, global, opts, sess, kube.Source[*unstructured.Unstructured], eventFormat[*unstructured.Unstructured](&documentFormat{output: opts.Output}))
	}
}

func runWatch[T labeled](ctx context.Context, streams Streams, global *GlobalOptions, opts WatchOptions, sess *session, newSource newSourceFunc[T], format eventFormat[T]) error {
	provider, stopMetrics, err := serveMetrics(global.MetricsAddr, streams.ErrOut)
	if err != nil {
		return err
	}
	defer stopMetrics()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &eventPrinter[T]{w: streams.Out, format: format, watchOnly: opts.WatchOnly}
	g, err := newGroup(ctx, groupOptions[T]{
		session:   sess,
		global:    global,
		newSource: newSource,
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

	if err := syncWithProgress(ctx, g, streams, global.SyncTimeout, sess.cfg.Host, true); err != nil {
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

// Event names as watch prints them.
const (
	eventAdded    = "ADDED"
	eventModified = "MODIFIED"
	eventDeleted  = "DELETED"
)

// printedEvent is one notification waiting to be printed.
type printedEvent[T labeled] struct {
	target  target
	typ     string
	obj     T
	initial bool
}

// eventFormat prints the events of one output format. The eventPrinter
// serializes its calls.
type eventFormat[T labeled] interface {
	// start is called once, after the sync, with the objects found then,
	// sorted by resource (in argument order), namespace and name; it prints
	// them when show is set (not --watch-only). A table sizes its columns
	// from them either way.
	start(w io.Writer, initial []printedEvent[T], show bool) error
	// event prints one later change.
	event(w io.Writer, ev printedEvent[T]) error
}

// eventPrinter prints watch notifications. Until flush, it keeps them (the
// progress bar owns the screen); flush prints the initial objects sorted,
// then the changes that came meanwhile in order, and later notifications
// are printed as they come. Handlers of several informers call it
// concurrently.
type eventPrinter[T labeled] struct {
	w         io.Writer
	format    eventFormat[T]
	watchOnly bool

	// failed is closed on the first write error (for example a closed
	// pipe), which ends the watch.
	failed   chan struct{}
	initOnce sync.Once

	// mu guards the fields below, serializes writes to w and calls to
	// format.
	mu      sync.Mutex
	flushed bool
	pending []printedEvent[T]
	err     error
}

func (p *eventPrinter[T]) init() {
	p.initOnce.Do(func() { p.failed = make(chan struct{}) })
}

func (p *eventPrinter[T]) handlerFor(t target) informer.Handler[T] {
	p.init()
	return informer.HandlerFuncs[T]{
		AddFunc: func(obj T, initial bool) {
			p.handle(printedEvent[T]{target: t, typ: eventAdded, obj: obj, initial: initial})
		},
		UpdateFunc: func(_, obj T) {
			p.handle(printedEvent[T]{target: t, typ: eventModified, obj: obj})
		},
		DeleteFunc: func(obj T, _ bool) {
			p.handle(printedEvent[T]{target: t, typ: eventDeleted, obj: obj})
		},
	}
}

func (p *eventPrinter[T]) handle(ev printedEvent[T]) {
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
func (p *eventPrinter[T]) flush() {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	var initial, live []printedEvent[T]
	for _, ev := range p.pending {
		if ev.initial {
			initial = append(initial, ev)
		} else {
			live = append(live, ev)
		}
	}
	slices.SortStableFunc(initial, func(a, b printedEvent[T]) int {
		return cmp.Or(cmp.Compare(a.target.index, b.target.index),
			cmp.Compare(a.obj.GetNamespace(), b.obj.GetNamespace()),
			cmp.Compare(a.obj.GetName(), b.obj.GetName()))
	})
	p.pending, p.flushed = nil, true
	bw := newBufferedWriter(p.w)
	err := p.format.start(bw, initial, !p.watchOnly)
	p.check(cmp.Or(err, bw.flush()))
	for _, ev := range live {
		p.printLocked(ev)
	}
}

func (p *eventPrinter[T]) printLocked(ev printedEvent[T]) {
	if p.err != nil {
		return
	}
	p.check(p.format.event(p.w, ev))
}

// check records the first write error and ends the watch.
func (p *eventPrinter[T]) check(err error) {
	if err != nil && p.err == nil {
		p.err = err
		close(p.failed)
	}
}

func (p *eventPrinter[T]) error() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// nameFormat prints "EVENT kind/name" per event (-o name).
type nameFormat[T labeled] struct{}

func (f nameFormat[T]) start(w io.Writer, initial []printedEvent[T], show bool) error {
	if !show {
		return nil
	}
	for _, ev := range initial {
		if err := f.event(w, ev); err != nil {
			return err
		}
	}
	return nil
}

func (nameFormat[T]) event(w io.Writer, ev printedEvent[T]) error {
	_, err := fmt.Fprintf(w, "%s %s\n", ev.typ, kindName(ev.target, ev.obj.GetName()))
	return err
}

// documentFormat prints each event as {"type":…, "object":…}: one line of
// JSON, or one YAML document, separated from the previous one by "---".
type documentFormat struct {
	output  string
	printed int
}

func (f *documentFormat) start(w io.Writer, initial []printedEvent[*unstructured.Unstructured], show bool) error {
	if !show {
		return nil
	}
	for _, ev := range initial {
		if err := f.event(w, ev); err != nil {
			return err
		}
	}
	return nil
}

func (f *documentFormat) event(w io.Writer, ev printedEvent[*unstructured.Unstructured]) error {
	doc := watchEvent{Type: ev.typ, Object: ev.obj.Object}
	f.printed++
	if f.output == outputJSON {
		return writeJSONLine(w, doc)
	}
	return writeYAML(w, doc, f.printed == 1)
}

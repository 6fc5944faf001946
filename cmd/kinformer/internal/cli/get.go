package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// GetOptions are the flags of `kinformer get`.
type GetOptions struct {
	// Output is -o: "", wide, name, json or yaml.
	Output string
	// SortBy is --sort-by, a field path such as .metadata.name.
	SortBy string
	// ChunkSize is --chunk-size: -o json and -o yaml list in pages of this
	// many objects (0: one response), as kubectl does.
	ChunkSize int64
	// LabelColumns (-L) and ShowLabels (--show-labels) add label columns
	// to tables, NoHeaders (--no-headers) leaves their headers out, as
	// kubectl does.
	LabelColumns []string
	ShowLabels   bool
	NoHeaders    bool
}

// errNoResource is what a command without a resource says, with a hint,
// as kubectl does.
func errNoResource(verb string) error {
	doing := verb
	if verb == "stats" {
		doing = "show the statistics of"
	}
	return &UserError{Message: fmt.Sprintf("no resource type given: name the type of resource to %[2]s, as in `kinformer %[1]s pods` or `kinformer %[1]s deploy,cm -A`.\n"+
		"A plural, singular, kind or short name works, custom resources' included; `kubectl api-resources` lists the types the server has.", verb, doing)}
}

// resourceArgs is the cobra.PositionalArgs of get, watch and stats: at
// least one resource.
func resourceArgs(verb string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return errNoResource(verb)
		}
		return nil
	}
}

// RunGet syncs an informer per resource in args (showing progress), then
// prints the objects from the cache: one table per resource, kubectl's
// columns as the server renders them; or names, JSON or YAML. Each output
// reads the cheapest source that serves it (see sourceFor). With names
// after a single resource, it prints those objects only, and fails for any
// not found.
func RunGet(ctx context.Context, streams Streams, global *GlobalOptions, opts GetOptions, args []string) error {
	if err := validOutput(opts.Output); err != nil {
		return err
	}
	if err := checkTemplate(opts.Output); err != nil {
		return err
	}
	path, err := parseSortBy(opts.SortBy)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return errNoResource("get")
	}
	resources, names := args[:1], args[1:]
	if len(names) == 0 {
		resources = args
	}
	if len(names) > 0 && global.AllNamespaces {
		// A name is unique within a namespace only: syncing every namespace
		// to look it up would be slow and could find several.
		return &UserError{Message: fmt.Sprintf("get %s %s -A: objects are named within a namespace; give it with -n NAMESPACE instead of -A",
			args[0], strings.Join(names, " "))}
	}
	sess, err := global.connect(ctx, resources)
	if err != nil {
		return err
	}
	if len(names) > 0 && len(sess.targets) > 1 {
		return errors.New("names can follow one resource only, as in `get pods web-0 web-1`")
	}
	if len(names) == 1 {
		// One object: the server selects it, rather than the whole
		// namespace being listed to print one (several names list the
		// namespace: a field selector cannot name more than one).
		one := *global
		one.FieldSelector = joinSelectors(global.FieldSelector, fields.OneTermEqualSelector("metadata.name", names[0]).String())
		global = &one
	}
	g := getter{streams: streams, global: global, sess: sess, names: names}
	// Named objects print in the order given, unless --sort-by says
	// otherwise; the others by namespace and name (or --sort-by).
	sorted := len(names) == 0 || len(path) > 0
	if streamable(opts.Output, path, names, sess) {
		return streamDocument(ctx, g, opts.Output, opts.ChunkSize) // document.go
	}
	switch sourceFor(opts.Output, path) {
	case fromMetadata:
		per, missing, err := readObjects(ctx, g, kube.Source[*metav1.PartialObjectMetadata])
		if err != nil {
			return err
		}
		for _, objs := range per {
			if sorted {
				sortMetadata(objs, path)
			}
		}
		return errors.Join(printNames(g, per), errors.Join(missing...))
	case fromTable:
		include, keep := tableInclude(sess.targets, path, false, !sess.shard.IsZero())
		if len(opts.LabelColumns) > 0 || opts.ShowLabels {
			// Labels are in each row's metadata.
			if include == includeNone {
				include = includeMetadata
			}
			keep = true
		}
		if include == includeMetadata && !keep && len(names) == 0 && sess.shard.IsZero() {
			// Only the namespace is wanted of the metadata (-A): see
			// tablebyns.go.
			ts := newTableSources(includeNone, false)
			per, ok, err := readTablesByNamespace(ctx, g, ts)
			if err != nil {
				return err
			}
			if ok {
				for _, rows := range per {
					sortRows(rows, path)
				}
				return printTables(g, per, ts, opts)
			}
		}
		ts := newTableSources(include, keep)
		per, missing, err := readObjects(ctx, g, ts.newSource)
		if err != nil {
			return err
		}
		for _, rows := range per {
			if sorted {
				sortRows(rows, path)
			}
		}
		return errors.Join(printTables(g, per, ts, opts), errors.Join(missing...))
	default:
		per, missing, err := readObjects(ctx, g, kube.Source[*unstructured.Unstructured])
		if err != nil {
			return err
		}
		for _, objs := range per {
			if sorted {
				sortObjects(objs, path)
			}
		}
		if opts.Output == outputName {
			return errors.Join(printNames(g, per), errors.Join(missing...))
		}
		if isTemplateOutput(opts.Output) {
			return errors.Join(printTemplate(g, per, opts.Output, opts.NoHeaders), errors.Join(missing...)) // templates.go
		}
		return errors.Join(printDocument(g, per, opts.Output), errors.Join(missing...))
	}
}

// getter is one run of get.
type getter struct {
	streams Streams
	global  *GlobalOptions
	sess    *session
	// names, when set, are the objects to print (of the single target).
	names []string
}

// readObjects syncs an informer per target from newSource and returns, for
// each target in order, the objects to print (all cached, or the named
// ones), and an error per named object not found. The informers have
// stopped when it returns.
func readObjects[T labeled](ctx context.Context, g getter, newSource newSourceFunc[T]) (per [][]T, missing []error, err error) {
	provider, stopMetrics, err := serveMetrics(g.global.MetricsAddr, g.streams.ErrOut)
	if err != nil {
		return nil, nil, err
	}
	defer stopMetrics()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	grp, err := newGroup(ctx, groupOptions[T]{
		session:   g.sess,
		global:    g.global,
		newSource: newSource,
		collector: newCollector(provider),
		warnings:  g.streams.ErrOut,
		ctxErr:    ctx.Err,
	})
	if err != nil {
		return nil, nil, err
	}
	var wg sync.WaitGroup
	wg.Go(func() { grp.run(ctx) })
	defer wg.Wait()
	defer cancel()
	// get's output is what it prints; the sync is reported on a terminal
	// only, where the progress bars were (piped, stderr stays quiet).
	if err := syncWithProgress(ctx, grp, g.streams, g.global.SyncTimeout, g.sess.cfg.Host, g.streams.ErrIsTerminal); err != nil {
		return nil, nil, err
	}
	for _, l := range grp.informers {
		lister := informer.NewLister(l.inf.Cache())
		if len(g.names) == 0 {
			list, _ := lister.List(nil)
			per = append(per, list)
			continue
		}
		var found []T
		for _, name := range g.names {
			o, err := lister.Namespace(l.target.namespace).Get(name)
			if err != nil {
				missing = append(missing, fmt.Errorf("%s %q not found%s", l.target.res.GVR.Resource, name, inNamespace(l.target)))
				continue
			}
			found = append(found, o)
		}
		per = append(per, found)
	}
	return per, missing, nil
}

// printNames prints kind/name per object, as -o name does.
func printNames[T labeled](g getter, per [][]T) error {
	if nothingFound(g, per) {
		return nil
	}
	w := newBufferedWriter(g.streams.Out)
	for i, objs := range per {
		for _, o := range objs {
			w.writeLine(kindName(g.sess.targets[i], o.GetName()))
		}
	}
	return w.flush()
}

// printTables prints one table per target that has rows, separated by a
// blank line, as kubectl does; names carry their kind when several
// resources were asked for.
func printTables(g getter, per [][]*tableRow, ts *tableSources, opts GetOptions) error {
	if nothingFound(g, per) {
		return nil
	}
	w := newBufferedWriter(g.streams.Out)
	printed := 0
	for i, rows := range per {
		if len(rows) == 0 {
			continue
		}
		t := g.sess.targets[i]
		view := newTableView(t, ts.columns(t.res.GVR), viewOptions{wide: opts.Output == outputWide, withKind: len(g.sess.targets) > 1,
			labelColumns: opts.LabelColumns, showLabels: opts.ShowLabels})
		if printed > 0 && !opts.NoHeaders {
			w.writeLine("")
		}
		printed++
		cells := make([][]string, 0, len(rows)+1)
		if !opts.NoHeaders {
			cells = append(cells, view.header())
		}
		for _, r := range rows {
			cells = append(cells, view.row("", r))
		}
		rw := &rowWriter{w: w}
		rw.fit(cells...)
		for _, c := range cells {
			_ = rw.write(c) // errors are kept by w
		}
	}
	return w.flush()
}

// nothingFound says "No resources found" on the error stream, as kubectl
// does, when there is nothing to print and no name was asked for (a
// missing name has its own error).
func nothingFound[T any](g getter, per [][]T) bool {
	for _, objs := range per {
		if len(objs) > 0 {
			return false
		}
	}
	if len(g.names) == 0 {
		fmt.Fprintf(g.streams.ErrOut, "No resources found%s.\n", inNamespace(g.sess.targets[0]))
	}
	return true
}

func inNamespace(t target) string {
	if t.namespace == "" {
		return ""
	}
	return " in namespace " + t.namespace
}

// bufferedWriter batches lines into large writes (tens of thousands of
// lines are common) and keeps the first write error.
type bufferedWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func newBufferedWriter(w io.Writer) *bufferedWriter {
	return &bufferedWriter{w: w, buf: make([]byte, 0, 64<<10)}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) >= 64<<10 {
		b.flush()
	}
	return len(p), b.err
}

func (b *bufferedWriter) writeLine(s string) {
	b.buf = append(append(b.buf, s...), '\n')
	if len(b.buf) >= 64<<10 {
		b.flush()
	}
}

// flush writes what is buffered and returns the first write error.
func (b *bufferedWriter) flush() error {
	if b.err == nil && len(b.buf) > 0 {
		_, b.err = b.w.Write(b.buf)
	}
	b.buf = b.buf[:0]
	return b.err
}

// joinSelectors is the selector requiring both a and b (either may be "").
func joinSelectors(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "," + b
}

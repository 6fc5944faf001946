package cli

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// GetOptions are the flags of `kinformer get`.
type GetOptions struct {
	// Output is -o: "", wide, name, json or yaml.
	Output string
	// SortBy is --sort-by, a field path such as .metadata.name.
	SortBy string
}

// RunGet syncs an informer per resource in args (showing progress), then
// prints the objects from the cache. With names after a single resource,
// it prints those objects only, and fails for any not found.
func RunGet(ctx context.Context, streams Streams, global *GlobalOptions, opts GetOptions, args []string) error {
	if err := validOutput(opts.Output); err != nil {
		return err
	}
	path, err := parseSortBy(opts.SortBy)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return errors.New("no resource given: name one, for example `pods` or `deploy,cm`")
	}
	resources, names := args[:1], args[1:]
	if len(names) == 0 {
		resources = args
	}
	sess, err := global.connect(ctx, resources)
	if err != nil {
		return err
	}
	if len(names) > 0 && len(sess.targets) > 1 {
		return errors.New("names can follow one resource only, as in `get pods web-0 web-1`")
	}
	provider, stopMetrics, err := serveMetrics(global.MetricsAddr, streams.ErrOut)
	if err != nil {
		return err
	}
	defer stopMetrics()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, err := newGroup(groupOptions[*unstructured.Unstructured]{
		session:   sess,
		global:    global,
		newSource: kube.Dynamic,
		collector: newCollector(provider),
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
	if err := syncWithProgress(ctx, g, streams, global.SyncTimeout, sess.cfg.Host); err != nil {
		return err
	}

	type found struct {
		target target
		obj    *unstructured.Unstructured
	}
	var objs []found
	var missing []error
	for _, l := range g.informers {
		lister := informer.NewLister(l.inf.Cache())
		if len(names) == 0 {
			list, _ := lister.List(nil)
			sortObjects(list, path)
			for _, o := range list {
				objs = append(objs, found{l.target, o})
			}
			continue
		}
		for _, name := range names {
			o, err := lister.Namespace(l.target.namespace).Get(name)
			if err != nil {
				missing = append(missing, fmt.Errorf("%s %q not found%s", l.target.res.GVR.Resource, name, inNamespace(l.target)))
				continue
			}
			objs = append(objs, found{l.target, o})
		}
	}

	switch opts.Output {
	case outputName:
		for _, f := range objs {
			fmt.Fprintln(streams.Out, kindName(f.target, f.obj.GetName()))
		}
	case outputJSON, outputYAML:
		var v any
		if len(names) == 1 && len(objs) == 1 {
			v = objs[0].obj.Object
		} else {
			items := make([]any, 0, len(objs))
			for _, f := range objs {
				items = append(items, f.obj.Object)
			}
			v = map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": items}
		}
		if opts.Output == outputJSON {
			err = writeIndentedJSON(streams.Out, v)
		} else {
			err = writeYAMLDoc(streams.Out, v)
		}
		if err != nil {
			return err
		}
	default:
		if len(objs) == 0 {
			if len(missing) == 0 {
				fmt.Fprintf(streams.ErrOut, "No resources found%s.\n", inNamespace(sess.targets[0]))
			}
			break
		}
		layout := newTableLayout(sess.targets, false, opts.Output == outputWide)
		now := global.now()
		rows := [][]string{layout.header()}
		for _, f := range objs {
			rows = append(rows, layout.row("", f.target, f.obj, now))
		}
		rw := &rowWriter{w: streams.Out}
		rw.fit(rows)
		for _, r := range rows {
			if err := rw.write(r); err != nil {
				return err
			}
		}
	}
	return errors.Join(missing...)
}

func inNamespace(t target) string {
	if t.namespace == "" {
		return ""
	}
	return " in namespace " + t.namespace
}

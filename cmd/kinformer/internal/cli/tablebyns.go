package cli

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/kube/table"
	"github.com/kinformer/kinformer/listwatch"
)

// A table of a namespaced resource in every namespace (get -A) needs each
// row's namespace, which the server's cells do not carry: across all
// namespaces the rows must include their object's metadata
// (includeObject=Metadata), managedFields and all. At 100,000 pods that
// metadata is most of the work on both ends: the apiserver spent about
// 30 s of CPU rendering it and the command 13 s decoding it, against 6 s
// and 3.5 s for the same rows without it (cli-100k-table in
// bench/README.md). So get lists the namespaces first and then each
// namespace's rows without their objects, the namespace known from the
// request, as long as the namespaces are few enough for one request each
// to be cheaper (maxNamespacesApart); with more, or when namespaces cannot
// be listed (RBAC), it lists across namespaces as before.

// maxNamespacesApart is the most namespaces listed one by one.
const maxNamespacesApart = 200

// namespacesResource is the Namespace resource (v1, cluster-scoped).
var namespacesResource = kube.Resource{GVR: corev1.SchemeGroupVersion.WithResource("namespaces"), Kind: "Namespace"}

// readTablesByNamespace returns get's rows for each target, listing a
// namespaced target without a namespace one namespace at a time (see
// above), with ts's sources (whose include must be includeNone). ok is
// false when this way does not apply (too many namespaces, or they cannot
// be listed), and nothing was read.
func readTablesByNamespace(ctx context.Context, g getter, ts *tableSources) (per [][]*tableRow, ok bool, err error) {
	if g.global.SyncTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, g.global.SyncTimeout,
			fmt.Errorf("%w after %s (is the server slow, or the list very large? raise --sync-timeout)", errSyncTimeout, g.global.SyncTimeout))
		defer cancel()
	}
	namespaces, ok := listNamespaces(ctx, g)
	if !ok {
		return nil, false, nil
	}
	for _, t := range g.sess.targets {
		inNamespaces := []string{t.namespace}
		if t.res.Namespaced && t.namespace == "" {
			inNamespaces = namespaces
		}
		var rows []*tableRow
		for _, ns := range inNamespaces {
			so := kube.SourceOptions{Resource: t.res, Selection: kube.Selection{Namespace: ns,
				LabelSelector: g.global.LabelSelector, FieldSelector: g.global.FieldSelector}}
			src, err := ts.newSource(ctx, g.sess.cfg, so)
			if err != nil {
				return nil, true, explain(fmt.Errorf("%s: %w", t.arg, err), g.sess.cfg.Host, t.arg)
			}
			if rows, err = appendPages(ctx, src, rows); err != nil {
				if cause := context.Cause(ctx); errors.Is(cause, errSyncTimeout) {
					err = fmt.Errorf("%s: %w", informerName(t), cause)
				}
				return nil, true, explain(err, g.sess.cfg.Host, t.arg)
			}
		}
		per = append(per, rows)
	}
	return per, true, nil
}

// listNamespaces returns the names of the cluster's namespaces, in the
// server's order, or false when there are more than maxNamespacesApart or
// they cannot be listed.
func listNamespaces(ctx context.Context, g getter) ([]string, bool) {
	src, err := table.New(g.sess.cfg, table.Options{Source: kube.SourceOptions{Resource: namespacesResource}, Include: table.IncludeNone})
	if err != nil {
		return nil, false
	}
	rows, err := appendPages(ctx, src, nil)
	if err != nil || len(rows) > maxNamespacesApart {
		return nil, false
	}
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		names = append(names, r.Name)
	}
	return names, true
}

// appendPages lists src in pages of the reflector's default size (kubectl's
// 500) and appends the rows to rows.
func appendPages(ctx context.Context, src listwatch.ListerWatcher[*tableRow], rows []*tableRow) ([]*tableRow, error) {
	opts := listwatch.Options{Limit: 500}
	for {
		page, err := src.List(ctx, opts)
		if err != nil {
			return rows, err
		}
		rows = append(rows, page.Items...)
		if page.Continue == "" {
			return rows, nil
		}
		opts.Continue = page.Continue
	}
}

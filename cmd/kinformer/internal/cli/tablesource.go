package cli

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/kube/table"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
)

// tableRow is one object as the server renders it in a Table (see
// package kube/table, whose source lists and watches them).
type tableRow = table.Row

// includeObject is what each row carries besides its cells (see
// table.Include and tableInclude).
type includeObject = table.Include

const (
	includeNone     = table.IncludeNone
	includeMetadata = table.IncludeMetadata
	includeWhole    = table.IncludeObject
)

// tableSources makes the Table sources of one command, one per resource,
// and remembers them so the printer can read each resource's columns.
type tableSources struct {
	include includeObject
	// keepObject keeps each row's metadata or object for --sort-by.
	keepObject bool

	// mu guards byResource.
	mu         sync.Mutex
	byResource map[schema.GroupVersionResource]columnSource
}

// columnSource is what the printer reads of a resource's source: the
// columns of its rows (*table.Source, or fixed ones in tests).
type columnSource interface {
	Columns() []metav1.TableColumnDefinition
}

func newTableSources(include includeObject, keepObject bool) *tableSources {
	return &tableSources{include: include, keepObject: keepObject, byResource: map[schema.GroupVersionResource]columnSource{}}
}

// newSource has the signature of newSourceFunc.
func (ts *tableSources) newSource(_ context.Context, cfg *rest.Config, opts kube.SourceOptions) (listwatch.ListerWatcher[*tableRow], error) {
	gvr := opts.Resource.GVR
	s, err := table.New(cfg, table.Options{Source: opts, Include: ts.include, KeepObject: ts.keepObject})
	if err != nil {
		return nil, err
	}
	ts.mu.Lock()
	ts.byResource[gvr] = s
	ts.mu.Unlock()
	if !opts.Shard.IsZero() {
		// The request carries the shard selector; a server without the
		// feature ignores it, and the rows outside the shard are dropped
		// here instead. The rows carry metadata (tableInclude), so each
		// has the uid and namespace the hash needs.
		return shard.Filter[*tableRow](s, opts.Shard), nil
	}
	return s, nil
}

// columns returns the latest column definitions the server sent for gvr,
// or nil.
func (ts *tableSources) columns(gvr schema.GroupVersionResource) []metav1.TableColumnDefinition {
	ts.mu.Lock()
	s := ts.byResource[gvr]
	ts.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.Columns()
}

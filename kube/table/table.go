// Package table lists and watches a resource as rows of the server's own
// Table rendering, the one kubectl prints: the server computes the
// columns (a custom resource's additionalPrinterColumns and -o wide's
// extra columns included) and only those, plus what keys each row, cross
// the wire. The kinformer command's get and watch print through it.
//
// A Source is a listwatch.ListerWatcher[*Row], so an informer built on it
// (informer.New) keeps a cache of rows. It shares the list/watch HTTP
// layer of package kube's sources: the same REST client settings, rate
// limits, query parameters, watch lifecycle and errors (a failure wraps
// the listwatch error the reflector acts on, and a body that does not
// decode wraps kube.ErrMalformed).
package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/internal/listquery"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
)

// accept asks for the server's own Table rendering, as kubectl does, and
// accepts a plain JSON answer from a server (an aggregated API) that
// cannot render one.
const accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// Include is the includeObject parameter of a Table request: what each row
// carries besides its cells.
type Include string

const (
	// IncludeNone: cells only. The row's key is then its name cell and
	// the source's namespace, so it serves one namespace (or a
	// cluster-scoped resource) only, and rows listed by a plain list have
	// no resource version: good for a one-off list, not for a watch.
	IncludeNone Include = "None"
	// IncludeMetadata: the object's metadata, as the server sends it by
	// default (and as kubectl gets it). Rows keep namespace, name, uid and
	// resource version (and, with Options.KeepObject, the metadata).
	IncludeMetadata Include = "Metadata"
	// IncludeObject: the whole object (kubectl asks for it to sort by a
	// field outside metadata).
	IncludeObject Include = "Object"
)

// Row is one object as the server renders it in a Table: one cell per
// column of the Table's column definitions (Source.Columns), and what
// keys the row in a cache. Rows in a cache are shared: never mutate one.
type Row struct {
	Namespace, Name, ResourceVersion string
	// UID is the row's object's, when the rows carry metadata.
	UID types.UID
	// Cells hold the row's values: strings, bools, json.Number (numbers
	// as the server wrote them), or what else the column's type says.
	Cells []any
	// Object is the row's metadata under "metadata" (IncludeMetadata) or
	// the whole object (IncludeObject), without managedFields, when
	// Options.KeepObject is set; else nil.
	Object map[string]any
}

func (r *Row) GetNamespace() string       { return r.Namespace }
func (r *Row) GetName() string            { return r.Name }
func (r *Row) GetResourceVersion() string { return r.ResourceVersion }
func (r *Row) GetUID() types.UID          { return r.UID }

// GetLabels returns nil: a row carries no labels.
func (r *Row) GetLabels() map[string]string { return nil }

// Options configure a Source.
type Options struct {
	// Resource, Selection and HTTPClient are read as a kube source reads
	// them (Resource.GVR names the resource; Selection.Namespace, when
	// set, is the namespace listed). The shard selector is sent; a
	// server that ignores it sends every row, and filtering them is the
	// caller's (shard.Filter, with IncludeMetadata so rows have a uid).
	Source kube.SourceOptions
	// Include says what rows carry besides cells; "" leaves it to the
	// server (metadata).
	Include Include
	// KeepObject keeps each row's metadata or object in Row.Object; it
	// is ignored with IncludeNone.
	KeepObject bool
}

// Source lists and watches one resource as rows. A watch with the Table
// Accept header sends, for each event, a Table of one row; only the first
// event of a watch carries the column definitions. A bookmark is a Table
// whose metadata carries the resource version. A server that cannot render
// a Table answers plain JSON objects; their rows then have kubectl's
// default columns, NAME and AGE. It is safe for concurrent use.
type Source struct {
	client    *rest.RESTClient
	gvr       schema.GroupVersionResource
	namespace string
	selection kube.Selection
	include   Include
	// keepObject keeps each row's metadata or object (see Row.Object).
	keepObject bool
	// columns holds the latest column definitions the server sent; nil
	// until the first list or watch event that carries them.
	columns atomic.Pointer[[]metav1.TableColumnDefinition]
}

var _ listwatch.ListerWatcher[*Row] = (*Source)(nil)

// New returns the Table source of opts.Source.Resource. cfg is copied, not
// kept.
func New(cfg *rest.Config, opts Options) (*Source, error) {
	gvr := opts.Source.Resource.GVR
	client, err := listquery.NewClient(cfg, gvr, accept, opts.Source.HTTPClient)
	if err != nil {
		return nil, err
	}
	keep := opts.KeepObject && opts.Include != IncludeNone
	return &Source{client: client, gvr: gvr, namespace: opts.Source.Namespace, selection: opts.Source.Selection,
		include: opts.Include, keepObject: keep}, nil
}

// Columns returns the latest column definitions the server sent (without
// their descriptions), or nil before any. A Table's cells follow them.
func (s *Source) Columns() []metav1.TableColumnDefinition {
	if c := s.columns.Load(); c != nil {
		return *c
	}
	return nil
}

func (s *Source) request(opts listwatch.Options, watch bool) *rest.Request {
	r := s.client.Get().Resource(s.gvr.Resource).SetHeader("Accept", accept)
	if s.namespace != "" {
		r = r.Namespace(s.namespace)
	}
	if s.include != "" {
		r = r.Param("includeObject", string(s.include))
	}
	sel := listquery.Selectors{Label: s.selection.LabelSelector, Field: s.selection.FieldSelector}
	if !s.selection.Shard.IsZero() {
		sel.Shard = s.selection.Shard.Selector()
	}
	return listquery.Set(r, opts, watch, sel)
}

// List returns one page of rows. It does not retry: back-off belongs to the
// reflector.
func (s *Source) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[*Row], error) {
	body, err := listquery.List(ctx, s.request(opts, false))
	if err != nil {
		return listwatch.Page[*Row]{}, fmt.Errorf("list %s: %w", s.describe(), err)
	}
	t, err := s.decodeBody(body)
	if err != nil {
		return listwatch.Page[*Row]{}, fmt.Errorf("list %s: %w", s.describe(), err)
	}
	return listwatch.Page[*Row]{Items: t.rows, ResourceVersion: t.resourceVersion,
		Continue: t.cont, RemainingItemCount: t.remaining, Bytes: int64(len(body))}, nil
}

// Watch opens a watch whose events carry rows. Next decodes in the
// caller's goroutine.
func (s *Source) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[*Row], error) {
	body, err := listquery.Watch(ctx, s.client, s.request(opts, true), accept, opts.SendInitialEvents)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", s.describe(), err)
	}
	dec := json.NewDecoder(errorReader{body})
	dec.UseNumber() // numeric cells print as the server wrote them
	return &tableWatch{src: s, body: body, dec: dec}, nil
}

func (s *Source) describe() string {
	d := s.gvr.Resource
	if s.gvr.Group != "" {
		d += "." + s.gvr.Group
	}
	if s.namespace != "" {
		d += " in namespace " + s.namespace
	}
	return d + " as a table"
}

// tableWatch decodes a Table watch stream, one event per Next.
type tableWatch struct {
	src  *Source
	body *listquery.Body
	dec  *json.Decoder
	// err is the terminal error; only Next touches it.
	err error
}

// Close ends the stream and unblocks a pending Next.
func (w *tableWatch) Close() error { return w.body.Close() }

func (w *tableWatch) Next() (listwatch.Event[*Row], error) {
	if w.err != nil {
		return listwatch.Event[*Row]{}, w.err
	}
	typ, t, status, err := w.src.decodeEvent(w.dec)
	if err != nil {
		var de *listwatch.DecodeError
		switch {
		case errors.As(err, &de):
			return listwatch.Event[*Row]{}, err // this event only
		case w.body.Closed() || errors.Is(err, io.EOF):
			w.err = io.EOF
		default:
			w.err = fmt.Errorf("watch %s: %w", w.src.describe(), listquery.MapError(err))
		}
		return listwatch.Event[*Row]{}, w.err
	}
	switch typ {
	case listwatch.Error:
		return listwatch.Event[*Row]{Type: listwatch.Error, Err: listquery.StatusError(status)}, nil
	case listwatch.Bookmark:
		return listwatch.Event[*Row]{Type: typ, Object: &Row{ResourceVersion: t.resourceVersion},
			ResourceVersion: t.resourceVersion, InitialEventsEnd: t.initialEventsEnd}, nil
	}
	if len(t.rows) != 1 {
		return listwatch.Event[*Row]{}, &listwatch.DecodeError{Type: typ, Got: fmt.Sprintf("a table of %d rows, want 1", len(t.rows))}
	}
	row := t.rows[0]
	if row.ResourceVersion == "" {
		row.ResourceVersion = t.resourceVersion // a single object's table carries its version
	}
	return listwatch.Event[*Row]{Type: typ, Object: row, ResourceVersion: row.ResourceVersion}, nil
}

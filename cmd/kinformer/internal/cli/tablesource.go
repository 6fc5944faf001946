package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/internal/listquery"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
)

// tableAccept asks for the server's own Table rendering, as kubectl does,
// and accepts a plain JSON answer from a server (an aggregated API) that
// cannot render one.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// includeObject is the includeObject parameter of a Table request: what
// each row carries besides its cells.
type includeObject string

const (
	// includeNone: cells only. The row's key is then its name cell and the
	// source's namespace, so it serves one namespace (or a cluster-scoped
	// resource) only, and rows listed by a plain list have no resource
	// version: good for get, not for watch (see tableSource).
	includeNone includeObject = "None"
	// includeMetadata: the object's metadata, as the server sends it by
	// default (and as kubectl gets it). Rows keep namespace, name and
	// resource version; the rest of the metadata is kept only for
	// --sort-by.
	includeMetadata includeObject = "Metadata"
	// includeWhole: the whole object, kept for --sort-by on a field outside
	// metadata (kubectl asks for the same when sorting).
	includeWhole includeObject = "Object"
)

// tableRow is one object as the server renders it in a Table: one cell per
// column of the Table's column definitions (see tableSource.columns), and
// what keys the row in a cache. Rows in a cache are shared: never mutate
// one.
type tableRow struct {
	namespace, name, resourceVersion string
	// uid is the row's object's, when the rows carry metadata: what a
	// --shard filter hashes.
	uid   types.UID
	cells []any
	// object is what --sort-by reads: the row's metadata under "metadata"
	// (includeMetadata) or the whole object (includeWhole), without
	// managedFields. nil unless the source keeps it.
	object map[string]any
}

func (r *tableRow) GetNamespace() string         { return r.namespace }
func (r *tableRow) GetName() string              { return r.name }
func (r *tableRow) GetResourceVersion() string   { return r.resourceVersion }
func (r *tableRow) GetLabels() map[string]string { return nil }
func (r *tableRow) GetUID() types.UID            { return r.uid }

// tableSources makes the Table sources of one command, one per resource,
// and remembers them so the printer can read each resource's columns.
type tableSources struct {
	include includeObject
	// keepObject keeps each row's metadata or object for --sort-by.
	keepObject bool

	// mu guards byResource.
	mu         sync.Mutex
	byResource map[schema.GroupVersionResource]*tableSource
}

func newTableSources(include includeObject, keepObject bool) *tableSources {
	return &tableSources{include: include, keepObject: keepObject, byResource: map[schema.GroupVersionResource]*tableSource{}}
}

// newSource has the signature of newSourceFunc.
func (ts *tableSources) newSource(_ context.Context, cfg *rest.Config, opts kube.SourceOptions) (listwatch.ListerWatcher[*tableRow], error) {
	gvr := opts.Resource.GVR
	s, err := newTableSource(cfg, gvr, opts, ts.include, ts.keepObject)
	if err != nil {
		return nil, err
	}
	ts.mu.Lock()
	ts.byResource[gvr] = s
	ts.mu.Unlock()
	if !opts.Shard.IsZero() {
		// The request carries the shard selector (see request); a server
		// without the feature ignores it, and the rows outside the shard
		// are dropped here instead. The rows carry metadata (tableInclude),
		// so each has the uid and namespace the hash needs.
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
	if c := s.columns.Load(); c != nil {
		return *c
	}
	return nil
}

// tableSource lists and watches one resource as rows of the server's Table
// rendering (the Accept header kubectl sends), so the server computes the
// columns kubectl shows, a custom resource's additionalPrinterColumns and
// -o wide's extra columns included, and only those cross the wire.
//
// A watch with the same Accept header sends, for each event, a Table of one
// row; only the first event of a watch carries the column definitions. A
// bookmark is a Table whose metadata carries the resource version. A server
// that cannot render a Table answers plain JSON objects; their rows then
// have kubectl's default columns, NAME and AGE.
//
// It belongs in package kube next to Metadata and Dynamic; it lives here
// because only the command needs it so far. It is safe for concurrent use.
type tableSource struct {
	client    *rest.RESTClient
	gvr       schema.GroupVersionResource
	namespace string
	selection kube.Selection
	include   includeObject
	// keepObject keeps each row's metadata or object (see tableRow.object).
	keepObject bool
	// columns holds the latest column definitions the server sent; nil
	// until the first list or watch event that carries them.
	columns atomic.Pointer[[]metav1.TableColumnDefinition]
}

var _ listwatch.ListerWatcher[*tableRow] = (*tableSource)(nil)

func newTableSource(cfg *rest.Config, gvr schema.GroupVersionResource, opts kube.SourceOptions, include includeObject, keepObject bool) (*tableSource, error) {
	rc := rest.CopyConfig(cfg)
	gv := gvr.GroupVersion()
	rc.GroupVersion = &gv
	rc.APIPath = "/apis"
	if gv.Group == "" {
		rc.APIPath = "/api"
	}
	rc.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc.AcceptContentTypes = tableAccept
	if rc.QPS == 0 && rc.Burst == 0 && rc.RateLimiter == nil {
		rc.QPS, rc.Burst = listquery.DefaultQPS, listquery.DefaultBurst
	}
	if rc.UserAgent == "" {
		rc.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	client, err := rest.RESTClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", gvr.String(), err)
	}
	if include == includeNone {
		keepObject = false
	}
	return &tableSource{client: client, gvr: gvr, namespace: opts.Namespace, selection: opts.Selection,
		include: include, keepObject: keepObject}, nil
}

func (s *tableSource) request(opts listwatch.Options, watch bool) *rest.Request {
	r := s.client.Get().Resource(s.gvr.Resource).SetHeader("Accept", tableAccept)
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
func (s *tableSource) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[*tableRow], error) {
	body, err := s.request(opts, false).MaxRetries(0).DoRaw(ctx)
	if err != nil {
		return listwatch.Page[*tableRow]{}, fmt.Errorf("list %s: %w", s.describe(), kube.MapError(err))
	}
	t, err := s.decodeBody(body)
	if err != nil {
		return listwatch.Page[*tableRow]{}, fmt.Errorf("list %s: %w", s.describe(), err)
	}
	return listwatch.Page[*tableRow]{Items: t.rows, ResourceVersion: t.resourceVersion,
		Continue: t.cont, RemainingItemCount: t.remaining}, nil
}

// Watch opens a watch whose events carry rows. Next decodes in the
// caller's goroutine.
func (s *tableSource) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[*tableRow], error) {
	u := s.request(opts, true).URL()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", s.describe(), err)
	}
	req.Header.Set("Accept", tableAccept)
	resp, err := s.client.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", s.describe(), kube.MapError(err))
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("watch %s: %w", s.describe(), kube.WatchResponseError(resp, body, opts.SendInitialEvents))
	}
	dec := json.NewDecoder(errorReader{resp.Body})
	dec.UseNumber() // numeric cells print as the server wrote them
	w := &tableWatch{src: s, body: resp.Body, dec: dec}
	w.stopAfter = context.AfterFunc(ctx, w.shut)
	return w, nil
}

func (s *tableSource) describe() string {
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
	src  *tableSource
	body io.ReadCloser
	dec  *json.Decoder
	// closed is set by Close and by cancellation of the watch's context;
	// once set, a failing read is a clean end (io.EOF).
	closed    atomic.Bool
	closeOnce sync.Once
	stopAfter func() bool
	// err is the terminal error; only Next touches it.
	err error
}

func (w *tableWatch) shut() {
	w.closed.Store(true)
	w.closeOnce.Do(func() { _ = w.body.Close() })
}

// Close ends the stream and unblocks a pending Next.
func (w *tableWatch) Close() error {
	w.stopAfter()
	w.shut()
	return nil
}

func (w *tableWatch) Next() (listwatch.Event[*tableRow], error) {
	if w.err != nil {
		return listwatch.Event[*tableRow]{}, w.err
	}
	typ, t, status, err := w.src.decodeEvent(w.dec)
	if err != nil {
		var de *listwatch.DecodeError
		switch {
		case errors.As(err, &de):
			return listwatch.Event[*tableRow]{}, err // this event only
		case w.closed.Load() || errors.Is(err, io.EOF):
			w.err = io.EOF
		default:
			w.err = fmt.Errorf("watch %s: %w", w.src.describe(), kube.MapError(err))
		}
		return listwatch.Event[*tableRow]{}, w.err
	}
	switch typ {
	case listwatch.Error:
		if status.Status == "" {
			status.Status = metav1.StatusFailure
		}
		return listwatch.Event[*tableRow]{Type: listwatch.Error, Err: kube.MapError(&apierrors.StatusError{ErrStatus: *status})}, nil
	case listwatch.Bookmark:
		return listwatch.Event[*tableRow]{Type: typ, Object: &tableRow{resourceVersion: t.resourceVersion},
			ResourceVersion: t.resourceVersion, InitialEventsEnd: t.initialEventsEnd}, nil
	}
	if len(t.rows) != 1 {
		return listwatch.Event[*tableRow]{}, &listwatch.DecodeError{Type: typ, Got: fmt.Sprintf("a table of %d rows, want 1", len(t.rows))}
	}
	row := t.rows[0]
	if row.resourceVersion == "" {
		row.resourceVersion = t.resourceVersion // a single object's table carries its version
	}
	return listwatch.Event[*tableRow]{Type: typ, Object: row, ResourceVersion: row.resourceVersion}, nil
}

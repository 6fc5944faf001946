package source

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/listquery"
	"github.com/kinformer/kinformer/internal/wire"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/shard"
)

// Options configure a source: which objects it lists and watches, how it
// reaches the server, and how it decodes (see kube.SourceOptions, which the
// kube package turns into these).
type Options struct {
	// Namespace, LabelSelector and FieldSelector say which objects are
	// listed and watched; Namespace applies only to a namespaced source.
	Namespace     string
	LabelSelector string
	FieldSelector string
	// Shard, when not zero, keeps only the objects in its ranges (see
	// shard.go).
	Shard shard.Set
	// HTTPClient, when set, carries every request; nil:
	// rest.HTTPClientFor(cfg).
	HTTPClient *http.Client
	// DisableInterning and ShareMutableParts set a typed source's
	// interning (see intern.go).
	DisableInterning  bool
	ShareMutableParts bool
	// ShardMetrics are the instruments of the shard filter.
	ShardMetrics metrics.ShardMetrics
}

// Source implements listwatch.ListerWatcher[T] for one resource. It is
// immutable once it is in use (ReuseCached, the one change, comes
// before) and safe for concurrent use.
type Source[T cache.Object] struct {
	client    *rest.RESTClient
	gvr       schema.GroupVersionResource
	namespace string
	opts      Options
	codec     *codec[T]
	shard     *shardFilter[T] // nil without Options.Shard
}

var _ listwatch.ListerWatcher[*metav1.PartialObjectMetadata] = (*Source[*metav1.PartialObjectMetadata])(nil)

// newSource builds the REST client for gvr; namespaced says whether
// opts.Namespace applies. cfg is copied, not kept.
func newSource[T cache.Object](cfg *rest.Config, gvr schema.GroupVersionResource, namespaced bool, opts Options, c *codec[T]) (*Source[T], error) {
	client, err := listquery.NewClient(cfg, gvr, c.listAccept, opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	s := &Source[T]{client: client, gvr: gvr, opts: opts, codec: c}
	if namespaced {
		s.namespace = opts.Namespace
	}
	s.shard = newShardFilter[T](opts.Shard, s.describe(), opts.ShardMetrics)
	return s, nil
}

// request builds a GET of the collection with opts as query parameters.
func (s *Source[T]) request(opts listwatch.Options, watch bool) *rest.Request {
	r := s.client.Get().Resource(s.gvr.Resource)
	if s.namespace != "" {
		r = r.Namespace(s.namespace)
	}
	sel := listquery.Selectors{Label: s.opts.LabelSelector, Field: s.opts.FieldSelector}
	if s.shard != nil {
		sel.Shard = s.shard.selector
	}
	return listquery.Set(r, opts, watch, sel)
}

// List returns one page. The items are the caller's; the source keeps none.
// It is rate limited by the config's QPS and Burst, and sent once
// (listquery.List says why).
func (s *Source[T]) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[T], error) {
	return s.list(ctx, opts, true)
}

// list is List; countDropped says whether a shard filter counts the
// objects it drops (see shardList).
func (s *Source[T]) list(ctx context.Context, opts listwatch.Options, countDropped bool) (listwatch.Page[T], error) {
	body, err := listquery.List(ctx, s.request(opts, false))
	if err != nil {
		return listwatch.Page[T]{}, fmt.Errorf("list %s: %w", s.describe(), err)
	}
	page, err := s.codec.list(body, bytes.HasPrefix(body, wire.Magic))
	if err != nil {
		return listwatch.Page[T]{}, fmt.Errorf("list %s: %w", s.describe(), err)
	}
	if s.shard != nil {
		page = s.shardList(ctx, body, page, countDropped)
	}
	page.Bytes = int64(len(body))
	return page, nil
}

// Watch opens a watch. It is not rate limited (a watch is long-lived, as in
// client-go). The returned Watch decodes in the caller's goroutine; see
// listwatch.Watch for its contract. An event carrying another kind than the
// source serves comes out of Next as a *listwatch.DecodeError and the stream
// stays usable; a stream that cannot be decoded ends with ErrMalformed.
func (s *Source[T]) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[T], error) {
	if s.shard != nil && opts.SendInitialEvents {
		s.probeShardMode(ctx)
	}
	body, err := listquery.Watch(ctx, s.client, s.request(opts, true), s.codec.watchAccept, opts.SendInitialEvents)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", s.describe(), err)
	}
	media, _, _ := mime.ParseMediaType(body.Header.Get("Content-Type"))
	proto := strings.Contains(media, "protobuf")
	if s.shard != nil {
		return s.shard.watch(newStreamWatch(body, s.codec, proto)), nil
	}
	return newStreamWatch(body, s.codec, proto), nil
}

func (s *Source[T]) describe() string {
	d := s.gvr.Resource
	if s.gvr.Group != "" {
		d += "." + s.gvr.Group
	}
	if s.namespace != "" {
		d += " in namespace " + s.namespace
	}
	return d
}

// ProtoDecoder returns the source's decoder of one object's protobuf bytes
// (envelope removed), nil when the source never receives protobuf; JSONDecoder
// that of one JSON object. Checkpoints decode their files through them, so
// that objects read back are what a list would have given (interned
// alike). Ask for them before ReuseCached, which changes the protobuf one.
func (s *Source[T]) ProtoDecoder() func([]byte) (T, error) { return s.codec.protoObject }

// JSONDecoder: see ProtoDecoder.
func (s *Source[T]) JSONDecoder() func([]byte) (T, error) { return s.codec.jsonObject }

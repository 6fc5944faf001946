package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/listquery"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/shard"
)

// Client-side rate limits applied to a source whose rest.Config leaves QPS
// and Burst at zero (client-go's own defaults, 5 and 10, starve informers).
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// Selection says which objects of a resource are listed, watched and
// cached. The zero value is every object in every namespace. It is set in
// one place for each source: SourceOptions for a source made by hand,
// InformerOptions for one a Factory makes (where it is part of the Key).
type Selection struct {
	// Namespace restricts a namespaced resource to one namespace. It is
	// ignored for cluster-scoped built-in resources (as client-go's
	// factory does). For Dynamic and Metadata sources a non-empty
	// Namespace means the resource is namespaced.
	Namespace string
	// LabelSelector and FieldSelector filter objects on the server, in its
	// string syntax ("app=web,tier!=db", "spec.nodeName=n1").
	LabelSelector string
	FieldSelector string
	// Shard, when not zero, keeps only the objects in these ranges of the
	// hash of their uid or namespace (KEP-5866; see package shard). It is
	// sent as shardSelector on every list and watch; a server that
	// applies it says so in its lists, and one that does not (feature gate
	// ShardedListAndWatch off, or older than 1.36) sends every object,
	// which the source then drops itself before anyone sees it: the same
	// objects are cached either way, but filtering on the client side
	// saves memory, not bandwidth. The source logs which it is, once and
	// on every change, and reports it in metrics.ShardMetrics.
	Shard shard.Set
}

// Validate parses both selectors and returns an error naming the one that
// does not parse, so that a typo is reported before any request is made
// rather than as a failing watch.
func (s Selection) Validate() error {
	if _, err := labels.Parse(s.LabelSelector); err != nil {
		return fmt.Errorf("label selector %q: %w", s.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(s.FieldSelector); err != nil {
		return fmt.Errorf("field selector %q: %w", s.FieldSelector, err)
	}
	return nil
}

// String renders the selection as "namespace=… labels=… fields=…",
// leaving out what is empty.
func (s Selection) String() string {
	var parts []string
	if s.Namespace != "" {
		parts = append(parts, "namespace="+s.Namespace)
	}
	if s.LabelSelector != "" {
		parts = append(parts, "labels="+s.LabelSelector)
	}
	if s.FieldSelector != "" {
		parts = append(parts, "fields="+s.FieldSelector)
	}
	if !s.Shard.IsZero() {
		parts = append(parts, "shard="+s.Shard.String())
	}
	return strings.Join(parts, " ")
}

// SourceOptions configure a source made by hand (Typed, Dynamic,
// Metadata). The zero value means every object of the resource, in every
// namespace.
type SourceOptions struct {
	// Selection says which objects are listed and watched. The selectors
	// are combined (AND) with those of each List or Watch call.
	Selection
	// HTTPClient, when set, carries every request (it must come from
	// rest.HTTPClientFor of the same config). A factory passes one client
	// to all its sources so they share connections even when client-go
	// cannot cache the config's transport (custom Dial, WrapTransport,
	// exec credentials). nil: rest.HTTPClientFor(cfg).
	HTTPClient *http.Client
	// DisableInterning turns off, for a Typed source, the interning of
	// strings: by default each string of a decoded object's metadata, and
	// of the pod spec and status it holds, is replaced by an equal one an
	// earlier object got (label keys and values, images, owner names,
	// ...). Go strings are immutable, so this sharing is invisible to
	// callers, even to one who mutates an object. On the pods of bench
	// scenario pod-memory it saves 629 bytes per pod (10,448 without, 9,819
	// with; go test -bench Retained ./internal/intern, lines plain and
	// strings) for about 5 µs of CPU per pod. DisableInterning also turns
	// ShareMutableParts off.
	DisableInterning bool
	// ShareMutableParts makes a Typed source also share mutable values
	// between the objects it decodes, when they are byte-identical on the
	// wire: managedFields' FieldsV1 (pointer and bytes), container
	// resource lists (maps), and a pod's containers, init containers,
	// volumes, tolerations, security context, affinity, readiness gates,
	// topology spread constraints and status conditions (slices, structs
	// and everything they point to), decoded once per distinct encoding.
	// An in-place change to one of those (setting a field of a container,
	// a volume or a condition, changing a resource list or FieldsV1's
	// bytes) then changes every object sharing it, not just one; an
	// append copies (shared slices have no spare capacity). Turn it on
	// only when nothing mutates decoded objects without deep-copying them
	// first (the contract of objects in a cache anyway; the informer's
	// mutation detector checks it).
	//
	// Memory, bench scenario pod-memory-shared against pod-memory (20,000
	// pods of 97 Deployments with the apiserver's managedFields, synced
	// into a shared informer; min/median/max of 5 runs): 4,041/4,046/4,051
	// bytes per cached pod with it, 9,598/9,604/9,605 without (client-go:
	// 10,326/10,339/10,339). Decoding also takes less CPU: each distinct
	// container, volume or condition run is decoded once. Off by default.
	ShareMutableParts bool
	// ShardMetrics are the instruments of the shard filter, when
	// Selection.Shard is set (see metrics.ShardProvider).
	ShardMetrics metrics.ShardMetrics
}

// source implements listwatch.ListerWatcher[T] for one resource. It is
// immutable after construction and safe for concurrent use.
type source[T cache.Object] struct {
	client    *rest.RESTClient
	gvr       schema.GroupVersionResource
	namespace string
	opts      SourceOptions
	codec     *codec[T]
	shard     *shardFilter[T] // nil without a Selection.Shard
}

var _ listwatch.ListerWatcher[*metav1.PartialObjectMetadata] = (*source[*metav1.PartialObjectMetadata])(nil)

// newSource builds the REST client for gvr. cfg is copied, not kept.
func newSource[T cache.Object](cfg *rest.Config, gvr schema.GroupVersionResource, namespaced bool, opts SourceOptions, c *codec[T]) (*source[T], error) {
	if cfg == nil {
		return nil, errors.New("kube: nil rest.Config")
	}
	if gvr.Resource == "" || gvr.Version == "" {
		return nil, fmt.Errorf("kube: resource %q needs a version and a resource name", gvr.String())
	}
	rc := rest.CopyConfig(cfg)
	gv := gvr.GroupVersion()
	rc.GroupVersion = &gv
	rc.APIPath = "/apis"
	if gv.Group == "" {
		rc.APIPath = "/api"
	}
	rc.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc.AcceptContentTypes = c.listAccept
	if rc.QPS == 0 && rc.Burst == 0 && rc.RateLimiter == nil {
		rc.QPS, rc.Burst = DefaultQPS, DefaultBurst
	}
	if rc.UserAgent == "" {
		rc.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	httpClient := opts.HTTPClient
	if httpClient == nil {
		var err error
		if httpClient, err = rest.HTTPClientFor(rc); err != nil {
			return nil, fmt.Errorf("kube: HTTP client for %s: %w", gvr.String(), err)
		}
	}
	client, err := rest.RESTClientForConfigAndClient(rc, httpClient)
	if err != nil {
		return nil, fmt.Errorf("kube: client for %s: %w", gvr.String(), err)
	}
	s := &source[T]{client: client, gvr: gvr, opts: opts, codec: c}
	if namespaced {
		s.namespace = opts.Namespace
	}
	s.shard = newShardFilter[T](opts.Shard, s.describe(), opts.ShardMetrics)
	return s, nil
}

// request builds a GET of the collection with opts as query parameters.
func (s *source[T]) request(opts listwatch.Options, watch bool) *rest.Request {
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
// It is rate limited by the config's QPS and Burst. It does not retry:
// rest's retries on 5xx answers carrying Retry-After would, for a too-large
// resource version, repeat a request the apiserver holds for seconds ten
// times over, hiding the failure from the reflector, which owns back-off.
func (s *source[T]) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[T], error) {
	res := s.request(opts, false).MaxRetries(0).Do(ctx)
	if err := res.Error(); err != nil {
		return listwatch.Page[T]{}, fmt.Errorf("list %s: %w", s.describe(), mapError(err))
	}
	body, _ := res.Raw()
	page, err := s.codec.list(body, bytes.HasPrefix(body, protoMagic))
	if err != nil {
		return listwatch.Page[T]{}, fmt.Errorf("list %s: %w", s.describe(), err)
	}
	if s.shard != nil {
		page = s.shardList(ctx, body, page)
	}
	page.Bytes = int64(len(body))
	return page, nil
}

// Watch opens a watch. It is not rate limited (a watch is long-lived, as in
// client-go). The returned Watch decodes in the caller's goroutine; see
// listwatch.Watch for its contract. An event carrying another kind than the
// source serves comes out of Next as a *listwatch.DecodeError and the stream
// stays usable; a stream that cannot be decoded ends with ErrMalformed.
func (s *source[T]) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[T], error) {
	if s.shard != nil && opts.SendInitialEvents {
		s.shard.probe(ctx, s)
	}
	u := s.request(opts, true).URL()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", s.describe(), err)
	}
	req.Header.Set("Accept", s.codec.watchAccept)
	resp, err := s.client.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", s.describe(), mapError(err))
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		err := responseError(resp, body)
		if opts.SendInitialEvents && streamingRejected(err) {
			return nil, fmt.Errorf("watch %s: %w: %w", s.describe(), listwatch.ErrStreamingListUnsupported, err)
		}
		return nil, fmt.Errorf("watch %s: %w", s.describe(), mapError(err))
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	proto := strings.Contains(media, "protobuf")
	if s.shard != nil {
		return s.shard.watch(newStreamWatch(ctx, resp.Body, s.codec, proto)), nil
	}
	return newStreamWatch(ctx, resp.Body, s.codec, proto), nil
}

func (s *source[T]) describe() string {
	d := s.gvr.Resource
	if s.gvr.Group != "" {
		d += "." + s.gvr.Group
	}
	if s.namespace != "" {
		d += " in namespace " + s.namespace
	}
	return d
}

// responseError builds the error of a failed response: the server's Status
// when the body holds one (protobuf or JSON), otherwise a generic error
// with the HTTP status and the body's text.
func responseError(resp *http.Response, body []byte) error {
	if st, ok := decodeStatus(body); ok {
		if st.Code == 0 {
			st.Code = int32(resp.StatusCode)
		}
		if st.Status == "" {
			st.Status = metav1.StatusFailure
		}
		return &apierrors.StatusError{ErrStatus: *st}
	}
	retryAfter, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	msg := strings.TrimSpace(truncate(body))
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return apierrors.NewGenericServerResponse(resp.StatusCode, http.MethodGet, schema.GroupResource{}, "", msg, retryAfter, true)
}

// decodeStatus decodes a metav1.Status from a response body.
func decodeStatus(body []byte) (*metav1.Status, bool) {
	st := &metav1.Status{}
	if bytes.HasPrefix(body, protoMagic) {
		env, err := parseEnvelope(body)
		if err != nil || string(env.kind) != "Status" || st.Unmarshal(env.raw) != nil {
			return nil, false
		}
		return st, true
	}
	if err := json.Unmarshal(body, st); err != nil || st.Kind != "Status" {
		return nil, false
	}
	return st, true
}

package listquery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/internal/metacodec"
)

// NewClient builds the REST client of one resource's collection: cfg
// (copied, not kept) pointed at gvr's group and version, answers accepted
// as accept, the default rate limits when cfg sets none (DefaultQPS),
// requests carried by hc (nil: rest.HTTPClientFor of the config).
func NewClient(cfg *rest.Config, gvr schema.GroupVersionResource, accept string, hc *http.Client) (*rest.RESTClient, error) {
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
	rc.NegotiatedSerializer = metacodec.Serializer
	rc.AcceptContentTypes = accept
	if rc.QPS == 0 && rc.Burst == 0 && rc.RateLimiter == nil {
		rc.QPS, rc.Burst = DefaultQPS, DefaultBurst
	}
	if rc.UserAgent == "" {
		rc.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if hc == nil {
		var err error
		if hc, err = rest.HTTPClientFor(rc); err != nil {
			return nil, fmt.Errorf("kube: HTTP client for %s: %w", gvr.String(), err)
		}
	}
	client, err := rest.RESTClientForConfigAndClient(rc, hc)
	if err != nil {
		return nil, fmt.Errorf("kube: client for %s: %w", gvr.String(), err)
	}
	return client, nil
}

// List sends r, a list request (see Set), once: it does not retry, since
// rest's retries on 5xx answers carrying Retry-After would, for a
// too-large resource version, repeat a request the apiserver holds for
// seconds ten times over, hiding the failure from the reflector, which
// owns back-off. It is rate limited by the client's QPS and Burst. The
// error is mapped (MapError).
func List(ctx context.Context, r *rest.Request) ([]byte, error) {
	res := r.MaxRetries(0).Do(ctx)
	// Error, unlike DoRaw's, decodes a Status sent in protobuf.
	if err := res.Error(); err != nil {
		return nil, MapError(err)
	}
	body, _ := res.Raw()
	return body, nil
}

// Watch opens the watch r asks for (see Set; r is only read for its URL)
// through client, with the Accept header accept. A watch is not rate
// limited (it is long-lived, as in client-go). An answer other than 200 is
// the server's error, mapped (see watchResponseError; streaming says the
// request asked for sendInitialEvents). The Body closes when ctx is done
// or on Close.
func Watch(ctx context.Context, client *rest.RESTClient, r *rest.Request, accept string, streaming bool) (*Body, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL().String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Client.Do(req)
	if err != nil {
		return nil, MapError(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		return nil, watchResponseError(resp, body, streaming)
	}
	return NewBody(ctx, resp.Body, resp.Header), nil
}

// NewBody wraps the body rc of a watch response with header h; Watch
// makes one of every watch it opens, tests of decoders of other streams.
func NewBody(ctx context.Context, rc io.ReadCloser, h http.Header) *Body {
	b := &Body{ReadCloser: rc, Header: h}
	b.stopAfter = context.AfterFunc(ctx, b.shut)
	return b
}

// Body is the body of a watch response, read by the watch's decoder in
// the caller's goroutine (no reader goroutine, no channel). It is closed
// by Close or by the end of the watch's context, whichever comes first;
// a read failing after that is a clean end (see ReadFailed).
type Body struct {
	io.ReadCloser
	// Header is the response's header.
	Header http.Header

	// closed is set by Close and by cancellation of the watch's context.
	closed    atomic.Bool
	closeOnce sync.Once
	// stopAfter unregisters the context.AfterFunc that closes the body.
	stopAfter func() bool
}

func (b *Body) shut() {
	b.closed.Store(true)
	b.closeOnce.Do(func() { _ = b.ReadCloser.Close() })
}

// Close ends the stream and unblocks a pending read. Safe to call more
// than once and from any goroutine.
func (b *Body) Close() error {
	b.stopAfter()
	b.shut()
	return nil
}

// Closed reports whether the body was closed (Close, or the watch's
// context ended).
func (b *Body) Closed() bool { return b.closed.Load() }

// ReadFailed turns a failed read of the body into the watch's final error:
// io.EOF (a clean end) when the body was closed or its context ended, or
// when the stream ended between events (atBoundary); malformed wrapping
// io.ErrUnexpectedEOF when it ended inside one; else the read's error,
// mapped.
func (b *Body) ReadFailed(err error, atBoundary bool, malformed error) error {
	switch {
	case b.closed.Load(), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return io.EOF
	case errors.Is(err, io.EOF) && atBoundary:
		return io.EOF
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: watch stream ended inside an event: %w", malformed, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("reading watch stream: %w", MapError(err))
}

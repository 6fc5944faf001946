package kubetest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/listwatch/fake"
)

// Options configure a Server. The zero value serves every built-in resource,
// starts empty and keeps all history until Compact.
type Options struct {
	// CustomResources are served besides the built-in resources.
	CustomResources []CustomResource
	// Objects are created, in order, before the server starts; each must
	// be of a served kind. Their resource versions are ignored.
	Objects []runtime.Object
	// CompactionWindow, when positive, keeps only that many versions of
	// history: after each write, older versions answer 410 Expired (see
	// Server.Compact). Zero keeps everything until Compact.
	CompactionWindow int64
	// StreamingListUnsupported makes the server refuse sendInitialEvents
	// with 422 Invalid, as a kube-apiserver without the WatchList feature
	// does; informers then list in pages.
	StreamingListUnsupported bool
	// Clock times watch timeouts (timeoutSeconds), RefuseFor and
	// UnavailableFor, and stamps creationTimestamp. Default: the real clock.
	Clock clock.WithTicker
}

// Server is a fake kube-apiserver on loopback. Create it with New (in a
// test) or Start. It is safe for concurrent use.
type Server struct {
	// Locks, in order: writeMu, then the store's own lock (every write
	// reads the stored object, checks it and writes it under writeMu),
	// then matchers.mu (the store's filter takes it); mu is never held
	// while calling the store.

	reg      *registry
	store    *fake.Source[*entry]
	matchers *matchers
	clock    clock.WithTicker
	opts     Options
	http     *httptest.Server

	// writeMu serializes writes, so each checks what it replaces.
	writeMu sync.Mutex
	// uids counts the objects created, for their uid and generated name;
	// guarded by writeMu.
	uids uint64

	// dropBookmarks: see DropBookmarks; read by every watch's handler.
	dropBookmarks atomic.Bool

	mu       sync.Mutex // guards the fields below
	requests []Request
	faults   requestFaults
	closed   bool
}

// Request is one request the server received.
type Request struct {
	Method string
	// Path and Query are the request's URL path and parameters.
	Path  string
	Query url.Values
	// Accept is the request's Accept header.
	Accept string
	// Verb is the API verb, as kube-apiserver's audit log names it: get,
	// list, watch, create, update, patch, delete; for a request outside
	// the resource API (discovery, /readyz), the HTTP method in lower case.
	Verb string
	// Code is the HTTP status answered: 0 for a refused request (its
	// connection was reset), or one not answered yet.
	Code int
}

// New starts a server for the test t: a failure to start fails t, and the
// server is closed when t and its subtests have completed (t.Cleanup).
// It is Start for tests; examples and TestMain use Start.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts a server on a loopback port. The caller must Close it.
func Start(opts Options) (*Server, error) {
	reg, err := newRegistry(opts.CustomResources)
	if err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	s := &Server{reg: reg, matchers: &matchers{}, clock: opts.Clock, opts: opts}
	if s.store, err = newStore(s.matchers, opts); err != nil {
		return nil, err
	}
	for _, obj := range opts.Objects {
		if err := s.Create(obj.DeepCopyObject()); err != nil {
			return nil, fmt.Errorf("kubetest: Options.Objects: %w", err)
		}
	}
	s.http = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s, nil
}

// Close stops the server: it ends every open watch, closes every client
// connection and waits for every request being served. It is safe to call
// more than once.
func (s *Server) Close() {
	s.mu.Lock()
	closed := s.closed
	s.closed = true
	s.mu.Unlock()
	if closed {
		return
	}
	s.http.CloseClientConnections() // ends watches: their requests' contexts are done
	s.http.Close()
	// Config's clients share the transport client-go caches per config;
	// drop its idle connections so none outlives the server.
	if c, err := rest.HTTPClientFor(s.Config()); err == nil {
		utilnet.CloseIdleConnectionsFor(c.Transport)
	}
}

// URL is the server's base URL, http://127.0.0.1:port.
func (s *Server) URL() string { return s.http.URL }

// Config returns a new rest.Config for the server, for kube.NewFactory and
// client-go's clientsets (kubernetes.NewForConfig, dynamic.NewForConfig,
// metadata.NewForConfig): plain HTTP, no credentials (the server
// authenticates nobody). Client-side rate limiting is off (QPS -1), so a
// test's writes are not throttled.
func (s *Server) Config() *rest.Config {
	return &rest.Config{Host: s.http.URL, QPS: -1}
}

// ResourceVersion returns the server's current resource version: the
// version of its latest change.
func (s *Server) ResourceVersion() string { return s.store.ResourceVersion() }

// OpenWatches counts the watches being served.
func (s *Server) OpenWatches() int { return s.store.OpenWatches() }

// Requests returns every request received so far, refused ones included,
// in the order received.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Query = cloneValues(r.Query)
		out[i] = r
	}
	return out
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// serveHTTP logs a request, applies the faults aimed at requests, and
// routes it.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	req, parseErr := s.parse(r)
	s.mu.Lock()
	i := len(s.requests)
	s.requests = append(s.requests, Request{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Accept: r.Header.Get("Accept"), Verb: req.verb,
	})
	now := s.clock.Now()
	fault := s.faults.takeLocked(now)
	s.refusalsOverLocked(now)
	s.mu.Unlock()
	rec := &recorder{ResponseWriter: w, record: func(code int) {
		s.mu.Lock()
		s.requests[i].Code = code
		s.mu.Unlock()
	}}
	switch {
	case fault == faultRefuse:
		resetConnection(w)
		return
	case fault == faultUnavailable:
		writeError(rec, shuttingDown())
		return
	case parseErr != nil:
		writeError(rec, parseErr)
		return
	}
	if req.res == nil {
		s.serveNonResource(rec, r)
		return
	}
	switch req.verb {
	case "get":
		s.get(rec, r, req)
	case "list":
		s.list(rec, r, req)
	case "watch":
		s.watch(rec, r, req)
	case "create":
		s.createHTTP(rec, r, req)
	case "update":
		s.updateHTTP(rec, r, req)
	case "patch":
		s.patchHTTP(rec, r, req)
	case "delete":
		s.deleteHTTP(rec, r, req)
	}
}

// recorder notes the status a handler answers with.
type recorder struct {
	http.ResponseWriter
	record func(code int)
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.wrote = true
		r.record(code)
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.WriteHeader(http.StatusOK)
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush and hijack through the
// recorder.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// trimPath splits a URL path into its segments.
func trimPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

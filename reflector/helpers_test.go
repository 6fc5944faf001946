package reflector_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/reflector"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type obj = *corev1.ConfigMap

func cm(name string) obj {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func key(o obj) string { return o.Namespace + "/" + o.Name }

// memStore is a map-backed cache.Writer that counts calls and records the
// version it is at. It takes every list whole (Replace), or, with
// incremental set, every list after its first write as a relist session.
type memStore struct {
	mu          sync.Mutex // guards every field
	objs        map[string]obj
	calls       map[string]int
	replace     error // returned by Replace and a session's Apply when set
	incremental bool
	written     bool
	session     *memRelist // the open session, if any
	rv          string     // the version of the last write, list or bookmark
}

func newMemStore() *memStore { return &memStore{objs: map[string]obj{}, calls: map[string]int{}} }

func (m *memStore) BeginRelist() (cache.RelistSession[obj], bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.incremental || !m.written {
		return nil, false
	}
	if m.session != nil {
		panic("BeginRelist with a session open")
	}
	m.calls["begin"]++
	m.session = &memRelist{m: m, listed: map[string]bool{}}
	return m.session, true
}

// memRelist is a memStore's relist session.
type memRelist struct {
	m      *memStore
	listed map[string]bool
}

// open fails unless s is the store's open session; called with m.mu held.
func (s *memRelist) open() error {
	if s.m.session != s {
		return cache.ErrRelistEnded
	}
	return nil
}

func (s *memRelist) Apply(items []obj) error {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := s.open(); err != nil {
		return err
	}
	m.calls["apply"]++
	if m.replace != nil {
		return m.replace
	}
	for _, o := range items {
		m.objs[key(o)] = o
		s.listed[key(o)] = true
	}
	return nil
}

func (s *memRelist) Delete(o obj) error {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := s.open(); err != nil {
		return err
	}
	delete(m.objs, key(o))
	delete(s.listed, key(o))
	return nil
}

func (s *memRelist) Finish(rv string) error {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := s.open(); err != nil {
		return err
	}
	m.calls["finish"]++
	m.rv = rv
	for k := range m.objs {
		if !s.listed[k] {
			delete(m.objs, k)
		}
	}
	m.session = nil
	return nil
}

func (s *memRelist) Abort() {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.open() == nil {
		m.calls["abort"]++
		m.session = nil
	}
}

func (m *memStore) put(op string, o obj) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[op]++
	m.written = true
	m.rv = o.ResourceVersion
	if op == "delete" {
		delete(m.objs, key(o))
	} else {
		m.objs[key(o)] = o
	}
	return nil
}

func (m *memStore) Add(o obj) error    { return m.put("add", o) }
func (m *memStore) Update(o obj) error { return m.put("update", o) }
func (m *memStore) Delete(o obj) error { return m.put("delete", o) }
func (m *memStore) Replace(items []obj, rv string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["replace"]++
	if m.replace != nil {
		return m.replace
	}
	m.written = true
	m.rv = rv
	m.objs = map[string]obj{}
	for _, o := range items {
		m.objs[key(o)] = o
	}
	return nil
}

func (m *memStore) Bookmark(rv string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["bookmark"]++
	m.rv = rv
}

// version returns the version the store was last told it is at.
func (m *memStore) version() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rv
}

func (m *memStore) count(op string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[op]
}

func (m *memStore) setReplaceErr(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.replace = err
}

// snapshot renders the store as sorted "key@rv" lines.
func (m *memStore) snapshot() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k, o := range m.objs {
		out = append(out, k+"@"+o.ResourceVersion)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func truth(s *fake.Source[obj]) string {
	var out []string
	for _, o := range s.Objects() {
		out = append(out, key(o)+"@"+o.ResourceVersion)
	}
	return strings.Join(out, ",")
}

// errLog collects reported errors.
type errLog struct {
	mu   sync.Mutex // guards errs
	errs []error
}

func (l *errLog) handle(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

// find returns the reported errors in phase that match target.
func (l *errLog) find(phase listwatch.Phase, target error) []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []error
	for _, err := range l.errs {
		var pe *listwatch.PhaseError
		if !errors.As(err, &pe) {
			panic(fmt.Sprintf("reported error without phase: %v", err))
		}
		if pe.Phase == phase && (target == nil || errors.Is(err, target)) {
			out = append(out, err)
		}
	}
	return out
}

func (l *errLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.errs)
}

// harness runs a reflector over a fake source inside a synctest bubble.
type harness struct {
	t     *testing.T
	src   *fake.Source[obj]
	store *memStore
	errs  *errLog
	r     *reflector.Reflector[obj]
}

// run builds a harness with srcOpts and opts (Source, Store, ErrorHandler
// filled in), lets setup seed the source, starts Run, waits for the first
// sync and hands over to body. It stops the reflector and checks that Run
// returned when body is done. The store takes every list as a Replace;
// runIncremental's takes relists as sessions (cache.Writer.BeginRelist).
func run(t *testing.T, srcOpts fake.Options[obj], opts reflector.Options[obj], setup func(*harness), body func(*harness)) {
	t.Helper()
	runWith(t, false, nil, srcOpts, opts, setup, body)
}

// runIncremental is run with a store that takes every list after its
// first write as a relist session.
func runIncremental(t *testing.T, srcOpts fake.Options[obj], opts reflector.Options[obj], setup func(*harness), body func(*harness)) {
	t.Helper()
	runWith(t, true, nil, srcOpts, opts, setup, body)
}

// runWith runs a harness whose store, incremental or not, the reflector
// writes to through wrap when it is not nil.
func runWith(t *testing.T, incremental bool, wrap func(cache.Writer[obj]) cache.Writer[obj], srcOpts fake.Options[obj],
	opts reflector.Options[obj], setup func(*harness), body func(*harness)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		src, err := fake.New(srcOpts)
		if err != nil {
			t.Fatal(err)
		}
		h := &harness{t: t, src: src, store: newMemStore(), errs: &errLog{}}
		h.store.incremental = incremental
		opts.Source = src
		opts.Store = h.store
		if wrap != nil {
			opts.Store = wrap(h.store)
		}
		opts.ErrorHandler = h.errs.handle
		h.r, err = reflector.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		if setup != nil {
			setup(h)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- h.r.Run(ctx) }()
		// Deferred so that it also runs when body fails the test.
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
			if n := src.OpenWatches(); n != 0 {
				t.Errorf("%d watches left open", n)
			}
		}()
		synctest.Wait()
		body(h)
	})
}

func (h *harness) create(names ...string) {
	h.t.Helper()
	for _, n := range names {
		if _, err := h.src.Create(cm(n)); err != nil {
			h.t.Fatal(err)
		}
	}
}

// settle lets every goroutine in the bubble run until blocked.
func (h *harness) settle() { synctest.Wait() }

// converged fails unless the store equals the source.
func (h *harness) converged() {
	h.t.Helper()
	if got, want := h.store.snapshot(), truth(h.src); got != want {
		h.t.Fatalf("store %q, source %q", got, want)
	}
	if got, want := h.r.LastSyncResourceVersion(), h.src.ResourceVersion(); got != want {
		h.t.Fatalf("LastSyncResourceVersion %q, source at %q", got, want)
	}
}

var plain = reflector.Options[obj]{Settings: reflector.Settings{Streaming: reflector.StreamingOff}}

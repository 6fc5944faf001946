package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
)

// waitTimeout bounds every wait for the cache to catch up with the server.
const waitTimeout = 60 * time.Second

// eventually polls cond until it reports true, failing the test with cond's
// last explanation when waitTimeout passes first. Polling a real server is
// the one place these tests wait on the clock; no test asserts a duration.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, why := cond()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not reached within %s: %s", what, waitTimeout, why)
		case <-tick.C:
		}
	}
}

// object is what the comparisons read of an API object.
type object interface {
	cache.Object
	GetUID() types.UID
}

// ident is what must match between the cache and the server.
type ident struct {
	rv  string
	uid types.UID
}

func idents[T object](objs []T) map[string]ident {
	m := make(map[string]ident, len(objs))
	for _, o := range objs {
		m[o.GetNamespace()+"/"+o.GetName()] = ident{rv: o.GetResourceVersion(), uid: o.GetUID()}
	}
	return m
}

// diff describes how got (the cache) differs from want (the server).
func diff(got, want map[string]ident) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cache has %d objects, server %d", len(got), len(want))
	n := 0
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok || g != want[k] {
			if n++; n <= 5 {
				fmt.Fprintf(&b, "; %s: cache %+v (present %v), server %+v", k, g, ok, want[k])
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			if n++; n <= 5 {
				fmt.Fprintf(&b, "; %s: cached, not on the server", k)
			}
		}
	}
	return b.String()
}

// requireCacheMatches waits until store holds exactly the objects a fresh
// list from the server returns (same names, versions and UIDs); list is
// called anew at each attempt, since the cache may lag the server.
func requireCacheMatches[T object, S object](t *testing.T, store cache.Reader[T], list func(ctx context.Context) ([]S, error)) {
	t.Helper()
	eventually(t, "cache equals a fresh list", func() (bool, string) {
		objs, err := list(t.Context())
		if err != nil {
			return false, "list: " + err.Error()
		}
		want, got := idents(objs), idents(store.List())
		if maps.Equal(got, want) {
			return true, ""
		}
		return false, diff(got, want)
	})
}

// ptrs returns pointers to the elements of items.
func ptrs[E any](items []E) []*E {
	out := make([]*E, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// note is one notification a handler received.
type note struct {
	kind    string // add, update, delete
	ns      string
	name    string
	rv      string
	oldRV   string // update only
	initial bool   // add: isInInitialList
	unknown bool   // delete: stateUnknown
}

// recorder is a handler that keeps every notification, in order.
type recorder[T cache.Object] struct {
	mu    sync.Mutex
	notes []note
}

func (r *recorder[T]) add(n note) {
	r.mu.Lock()
	r.notes = append(r.notes, n)
	r.mu.Unlock()
}

func (r *recorder[T]) handler() informer.HandlerFuncs[T] {
	return informer.HandlerFuncs[T]{
		AddFunc: func(o T, initial bool) {
			r.add(note{kind: "add", ns: o.GetNamespace(), name: o.GetName(), rv: o.GetResourceVersion(), initial: initial})
		},
		UpdateFunc: func(old, o T) {
			r.add(note{kind: "update", ns: o.GetNamespace(), name: o.GetName(), rv: o.GetResourceVersion(), oldRV: old.GetResourceVersion()})
		},
		DeleteFunc: func(o T, unknown bool) {
			r.add(note{kind: "delete", ns: o.GetNamespace(), name: o.GetName(), rv: o.GetResourceVersion(), unknown: unknown})
		},
	}
}

// of returns the notifications about one object.
func (r *recorder[T]) of(name string) []note {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []note
	for _, n := range r.notes {
		if n.name == name {
			out = append(out, n)
		}
	}
	return out
}

func (r *recorder[T]) all() []note {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.notes)
}

// errorLog keeps the errors an informer reports.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) handle(err error) {
	l.mu.Lock()
	l.errs = append(l.errs, err)
	l.mu.Unlock()
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errs)
}

// running is an informer started by runInformer, with a recording handler.
type running[T cache.Object] struct {
	inf  *informer.Shared[T]
	rec  *recorder[T]
	errs *errorLog
}

// runInformer builds a shared informer over src, registers a recording
// handler, runs it until the test ends (waiting for Run to return) and
// waits for the handler to sync unless noWait.
func runInformer[T cache.Object](t *testing.T, src listwatch.ListerWatcher[T], opts informer.Options[T], noWait bool) running[T] {
	t.Helper()
	r := running[T]{rec: &recorder[T]{}, errs: &errorLog{}}
	opts.Source = src
	if opts.ErrorHandler == nil {
		opts.ErrorHandler = r.errs.handle
	}
	inf, err := informer.NewShared(opts)
	if err != nil {
		t.Fatal(err)
	}
	r.inf = inf
	reg, err := inf.AddHandler(r.rec.handler(), informer.HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }() // Ends when the test's cleanup cancels ctx.
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("informer Run: %v", err)
		}
	})
	if !noWait {
		eventually(t, "handler synced", func() (bool, string) {
			return reg.HasSynced(), fmt.Sprintf("errors so far: %v", r.errs.all())
		})
	}
	return r
}

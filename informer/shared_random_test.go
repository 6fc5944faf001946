package informer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/reflector"
)

// countingProvider counts merges per handler name.
type countingProvider struct {
	mu     sync.Mutex
	merged map[string]*atomic.Int64
}

func (p *countingProvider) NewReflectorMetrics(string) metrics.ReflectorMetrics {
	return metrics.ReflectorMetrics{}
}

func (p *countingProvider) NewInformerMetrics(string) metrics.InformerMetrics {
	return metrics.InformerMetrics{}
}

func (p *countingProvider) NewHandlerMetrics(_, handler string) metrics.HandlerMetrics {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := &atomic.Int64{}
	p.merged[handler] = c
	return metrics.HandlerMetrics{Merged: counterFunc(func() { c.Add(1) })}
}

// drained reports whether the informer's queue and every handler's backlog
// are empty and no handler is in a call.
func drained[T cache.Object](inf *Shared[T]) bool {
	if inf.queue.Len() > 0 {
		return false
	}
	inf.handlers.mu.Lock()
	defer inf.handlers.mu.Unlock()
	for _, l := range inf.handlers.listeners {
		l.mu.Lock()
		busy := l.calls > 0 || l.inFlight
		l.mu.Unlock()
		if busy {
			return false
		}
	}
	return true
}

// TestSharedRandomizedHandlersConvergeOverFaultySource runs handlers of
// different speeds (one added late, one removed half-way) while random
// creates, updates and deletes hit a source that resets, closes and
// refuses watches, drops events and compacts its history. At the end the
// cache equals the source, and every remaining handler's view, built only
// from the notifications it received through valid calls, equals the
// cache. Meanwhile the version the cache reflects never goes back, and
// every wait for the version of an update returns with the cache holding
// that update or a later state of the object.
func TestSharedRandomizedHandlersConvergeOverFaultySource(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { randomRun(t, seed) })
		})
	}
}

func randomRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	src, err := fake.New(fake.Options[*corev1.ConfigMap]{CompactionWindow: 40})
	if err != nil {
		t.Fatal(err)
	}
	prov := &countingProvider{merged: map[string]*atomic.Int64{}}
	errs := &errSink{}
	inf, err := NewShared(Options[*corev1.ConfigMap]{
		Source: src, ErrorHandler: errs.add, Metrics: prov, Settings: reflector.Settings{PageSize: 7},
	})
	if err != nil {
		t.Fatal(err)
	}
	inf.handlers.minThreshold = 8 // merge early, to exercise merging

	type member struct {
		name string
		r    *viewRecorder[*corev1.ConfigMap]
		reg  *Registration
	}
	var members []*member
	add := func(name string, delay func() time.Duration, resync time.Duration) *member {
		r := newViewRecorder[*corev1.ConfigMap]()
		if delay != nil {
			r.onCall = func() { time.Sleep(delay()) }
		}
		reg, err := inf.AddHandler(r, HandlerOptions{Name: name, ResyncPeriod: resync})
		if err != nil {
			t.Fatal(err)
		}
		m := &member{name: name, r: r, reg: reg}
		members = append(members, m)
		return m
	}
	// Each handler's delay draws from its own generator, on its own
	// goroutine.
	jitter := func(seed uint64, maxDelay time.Duration) func() time.Duration {
		g := rand.New(rand.NewPCG(seed, 7))
		return func() time.Duration { return time.Duration(g.Int64N(int64(maxDelay))) }
	}
	add("fast", nil, 0)
	add("steady", func() time.Duration { return time.Millisecond }, 45*time.Second)
	add("slow", func() time.Duration { return 100 * time.Millisecond }, 0)
	add("stalling", jitter(seed, 200*time.Millisecond), time.Minute)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()

	names := func() []string {
		var out []string
		for _, o := range src.Objects() {
			out = append(out, o.Name)
		}
		return out
	}
	// waits are WaitForResourceVersion calls for the version of an update,
	// each checking, once it returns, that the cache reflects it.
	var (
		waits      sync.WaitGroup
		waitMu     sync.Mutex
		waitErrs   []string
		waitsMet   atomic.Int64
		lastReach  cache.Mark
		lastReachN int
	)
	waitFor := func(key, rv string) {
		waits.Go(func() {
			if err := inf.WaitForResourceVersion(ctx, rv); err != nil {
				return // the run ended first
			}
			waitsMet.Add(1)
			obj, ok, _ := inf.Cache().GetByKey(key)
			_, name, _ := cache.SplitMetaNamespaceKey(key)
			_, inSource := src.Get("ns", name)
			var bad string
			switch {
			case ok && mustAtoi(obj.ResourceVersion) < mustAtoi(rv):
				bad = fmt.Sprintf("%s at %s in the cache after a wait for %s", key, obj.ResourceVersion, rv)
			case !ok && inSource:
				bad = fmt.Sprintf("%s missing from the cache after a wait for its update at %s", key, rv)
			}
			if bad != "" {
				waitMu.Lock()
				waitErrs = append(waitErrs, bad)
				waitMu.Unlock()
			}
		})
	}
	var removed *member
	next := 0
	const steps = 3000
	for step := range steps {
		if r := inf.queue.Reached(); r.Seq < lastReach.Seq || r.ResourceVersion != "" && mustAtoi(r.ResourceVersion) < lastReachN {
			t.Fatalf("step %d: the cache went back from %+v to %+v", step, lastReach, r)
		} else if r.ResourceVersion != "" {
			lastReach, lastReachN = r, mustAtoi(r.ResourceVersion)
		}
		switch {
		case step == steps/3:
			add("late", jitter(seed+100, 5*time.Millisecond), 0)
		case step == steps/2:
			removed = add("removed", nil, 0)
		case step == 2*steps/3:
			if err := inf.RemoveHandler(removed.reg); err != nil {
				t.Fatal(err)
			}
		}
		existing := names()
		switch p := rng.IntN(100); {
		case p < 25 || len(existing) < 5:
			if len(existing) < 150 {
				next++
				if _, err := src.Create(cm(fmt.Sprintf("o%d", next), 0)); err != nil {
					t.Fatal(err)
				}
			}
		case p < 80:
			obj, _ := src.Get("ns", existing[rng.IntN(len(existing))])
			obj.Data = map[string]string{"step": fmt.Sprint(step)}
			updated, err := src.Update(obj)
			if err != nil {
				t.Fatal(err)
			}
			if step%20 == 0 {
				waitFor(keyOf(updated), updated.ResourceVersion)
			}
		case p < 99:
			if _, err := src.Delete("ns", existing[rng.IntN(len(existing))]); err != nil {
				t.Fatal(err)
			}
		default:
			switch rng.IntN(5) {
			case 0:
				src.ResetWatches()
			case 1:
				src.CloseWatches()
			case 2:
				src.DropNextEvent()
			case 3:
				src.Compact()
			case 4:
				src.RefuseNext(1 + rng.IntN(3))
			}
		}
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
	}
	// Let back-off expire (it may have grown to a minute), relists finish
	// and every handler drain: poll, on the bubble's clock, for up to an
	// hour.
	truth := versionsOf(src.Objects())
	for range 3600 {
		synctest.Wait()
		if drained(inf) && maps.Equal(versionsOf(inf.Cache().List()), truth) {
			break
		}
		time.Sleep(time.Second)
	}
	synctest.Wait()

	cached := versionsOf(inf.Cache().List())
	if !maps.Equal(cached, truth) {
		t.Fatalf("cache (%d objects) differs from the source (%d objects)", len(cached), len(truth))
	}
	for _, m := range members {
		if m == removed {
			continue
		}
		if errs := m.r.errors(); len(errs) > 0 {
			t.Errorf("%s: %d invalid calls, first %v", m.name, len(errs), errs[0])
		}
		if got := m.r.versions(); !maps.Equal(got, cached) {
			t.Errorf("%s: view (%d objects) differs from the cache (%d objects)", m.name, len(got), len(cached))
		}
		if !m.reg.HasSynced() {
			t.Errorf("%s: registration not synced", m.name)
		}
	}
	for _, m := range members {
		t.Logf("%s: %d calls, %d merged", m.name, m.r.calls.Load(), prov.merged[m.name].Load())
	}
	t.Logf("source: %+v", src.Stats())
	if prov.merged["slow"].Load() == 0 {
		t.Errorf("the slow handler never had notifications merged; the test does not exercise merging")
	}
	if st := src.Stats(); st.Faults() == 0 || st.Expired == 0 {
		t.Errorf("source stats %+v: the faults were not exercised", st)
	}
	for _, err := range errs.all() {
		var pe *HandlerPanicError
		var me *MutationError
		if errors.As(err, &pe) || errors.As(err, &me) {
			t.Errorf("unexpected error: %v", err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	waits.Wait()
	if len(waitErrs) > 0 {
		t.Errorf("%d waits returned before the cache reflected their version; first: %s", len(waitErrs), waitErrs[0])
	}
	if waitsMet.Load() == 0 {
		t.Errorf("no wait for a version returned; the test does not exercise them")
	}
	t.Logf("%d waits for a version met", waitsMet.Load())
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

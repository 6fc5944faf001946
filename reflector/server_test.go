package reflector_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/reflector"
)

// refused is the error a kube source gives when nothing listens.
func refused() error {
	op := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	return fmt.Errorf("%w: %w", listwatch.ErrUnavailable, op)
}

// shuttingDown is the error of a kube-apiserver that is shutting down.
func shuttingDown() error {
	return fmt.Errorf("%w: %w", listwatch.ErrUnavailable, apierrors.NewServiceUnavailable("apiserver is shutting down"))
}

// outage is a server that refuses every request between two moments, and
// records when requests came (all inside a synctest bubble, so times are
// the bubble's).
type outage struct {
	mu       sync.Mutex
	from, to time.Time
	requests []time.Time
}

func (o *outage) down(now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !now.Before(o.from) && now.Before(o.to)
}

func (o *outage) hook(listwatch.Options) error {
	now := time.Now()
	o.mu.Lock()
	o.requests = append(o.requests, now)
	o.mu.Unlock()
	if o.down(now) {
		return refused()
	}
	return nil
}

func (o *outage) probe(context.Context) error {
	if o.down(time.Now()) {
		return refused()
	}
	return nil
}

// requestsIn counts the requests in [from, from+d).
func (o *outage) requestsIn(from time.Time, d time.Duration) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, at := range o.requests {
		if !at.Before(from) && at.Before(from.Add(d)) {
			n++
		}
	}
	return n
}

// recoverAfterOutage runs n reflectors (one source each, as n resources of
// one server) through a 60 s outage and returns how long after the server
// came back each was watching again (-1: not within a minute), and the
// requests of the first second.
func recoverAfterOutage(t *testing.T, n int, shared bool) (back []time.Duration, firstSecond int) {
	synctest.Test(t, func(t *testing.T) {
		o := &outage{}
		var server *reflector.Server
		if shared {
			server = reflector.NewServer(reflector.ServerOptions{Probe: o.probe})
		}
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer func() { cancel(); wg.Wait() }()
		if server != nil {
			wg.Go(func() { server.Run(ctx) })
		}
		srcs := make([]*fake.Source[obj], n)
		for i := range srcs {
			src, err := fake.New(fake.Options[obj]{OnList: o.hook, OnWatch: o.hook})
			if err != nil {
				t.Fatal(err)
			}
			srcs[i] = src
			r, err := reflector.New(reflector.Options[obj]{
				Source: src, Store: newMemStore(), ErrorHandler: func(error) {},
				Settings: reflector.Settings{Streaming: reflector.StreamingOff, Server: server},
			})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() { _ = r.Run(ctx) })
		}
		synctest.Wait()
		start := time.Now()
		o.mu.Lock()
		o.from, o.to = start, start.Add(time.Minute)
		o.mu.Unlock()
		for _, src := range srcs {
			src.ResetWatches()
		}
		time.Sleep(time.Minute)
		up := time.Now()
		back = make([]time.Duration, n)
		for i := range back {
			back[i] = -1
		}
		for time.Since(up) < time.Minute {
			time.Sleep(10 * time.Millisecond)
			for i, src := range srcs {
				if back[i] < 0 && src.OpenWatches() == 1 {
					back[i] = time.Since(up)
				}
			}
		}
		firstSecond = o.requestsIn(up, time.Second)
	})
	return back, firstSecond
}

func TestSharedServerBringsEveryReflectorBackSoonAfterAnOutage(t *testing.T) {
	const n = 10
	back, firstSecond := recoverAfterOutage(t, n, true)
	bound := reflector.DefaultProbeInterval + reflector.DefaultWakeSpread + 100*time.Millisecond
	for i, d := range back {
		if d < 0 || d > bound {
			t.Errorf("reflector %d watching again %v after the server came back, want within %v", i, d, bound)
		}
	}
	// One request per reflector, spread over the wake window: no stampede
	// (a reflector's retry is a watch; at most one retry fails per
	// reflector when its request came just before the server answered).
	if firstSecond > 2*n {
		t.Errorf("%d requests in the first second after the outage, want at most %d", firstSecond, 2*n)
	}

	// Without a shared server each reflector sleeps out its own back-off,
	// which reaches 30-60 s in a minute-long outage: some are still
	// waiting long after the server is back.
	alone, _ := recoverAfterOutage(t, n, false)
	late := 0
	for _, d := range alone {
		if d < 0 || d > bound {
			late++
		}
	}
	if late == 0 {
		t.Errorf("without a shared server every reflector was back within %v (%v): the test does not tell the difference", bound, alone)
	}
}

// A server that answers the probe while refusing one resource (an
// aggregated API that is down, say) must not draw a retry of that
// resource at every probe: after one early try fails, the reflector waits
// out its own back-off.
func TestEarlyWakeIsNotRepeatedAfterAFailedTry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		requests := 0
		failing := false
		hook := func(listwatch.Options) error {
			mu.Lock()
			defer mu.Unlock()
			requests++
			if failing {
				return refused()
			}
			return nil
		}
		server := reflector.NewServer(reflector.ServerOptions{Probe: func(context.Context) error { return nil }})
		src, err := fake.New(fake.Options[obj]{OnList: hook, OnWatch: hook})
		if err != nil {
			t.Fatal(err)
		}
		r, err := reflector.New(reflector.Options[obj]{
			Source: src, Store: newMemStore(), ErrorHandler: func(error) {},
			Settings: reflector.Settings{Streaming: reflector.StreamingOff, Server: server},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { server.Run(ctx) })
		wg.Go(func() { _ = r.Run(ctx) })
		synctest.Wait()
		mu.Lock()
		failing, requests = true, 0
		mu.Unlock()
		src.ResetWatches()
		time.Sleep(time.Minute)
		mu.Lock()
		got := requests
		mu.Unlock()
		cancel()
		wg.Wait()
		// Own back-off: 0.8 s doubling (with jitter) to 30 s is at most 7
		// tries in a minute; waking at every probe would be about 60.
		if got > 10 {
			t.Errorf("%d requests in a minute to a resource that keeps failing, want at most 10", got)
		}
	})
}

// Failing follows the cause of an outage as it changes, and clears once a
// request succeeds; Failures counts each failure by reason.
func TestFailingGaugeFollowsTheLatestReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var next []error
		hook := func(listwatch.Options) error {
			mu.Lock()
			defer mu.Unlock()
			if len(next) == 0 {
				return nil
			}
			err := next[0]
			next = next[1:]
			return err
		}
		m := newTally()
		src, err := fake.New(fake.Options[obj]{OnList: hook, OnWatch: hook})
		if err != nil {
			t.Fatal(err)
		}
		r, err := reflector.New(reflector.Options[obj]{
			Source: src, Store: newMemStore(), ErrorHandler: func(error) {}, Metrics: m,
			Settings: reflector.Settings{Streaming: reflector.StreamingOff},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		synctest.Wait()
		if n := m.n("failures." + metrics.FailureShuttingDown); n != 0 {
			t.Fatalf("failures before any: %d", n)
		}
		mu.Lock()
		next = []error{shuttingDown(), refused(), refused()}
		mu.Unlock()
		src.ResetWatches()
		// The reset, then a back-off of 0.8-1.6 s and the shutting-down
		// answer; the next try is at least 2.4 s after the reset.
		time.Sleep(1700 * time.Millisecond)
		synctest.Wait()
		_, v := m.get("failing." + metrics.FailureShuttingDown)
		if v != 1 {
			t.Fatalf("failing{shutting-down} = %v after the server said it is shutting down", v)
		}
		time.Sleep(3300 * time.Millisecond) // the refusal comes by 4.8 s, the next try after 5.6 s
		synctest.Wait()
		if _, v := m.get("failing." + metrics.FailureShuttingDown); v != 0 {
			t.Errorf("failing{shutting-down} = %v once connections were refused", v)
		}
		if _, v := m.get("failing." + metrics.FailureConnectionRefused); v != 1 {
			t.Errorf("failing{connection-refused} = %v once connections were refused", v)
		}
		time.Sleep(time.Minute) // the last refusal, then a success
		synctest.Wait()
		if _, v := m.get("failing." + metrics.FailureConnectionRefused); v != 0 {
			t.Errorf("failing{connection-refused} = %v after a request succeeded", v)
		}
		if got := m.n("failures." + metrics.FailureConnectionRefused); got != 2 {
			t.Errorf("failures{connection-refused} counted %d times, want 2", got)
		}
		if got := m.n("failures." + metrics.FailureShuttingDown); got != 1 {
			t.Errorf("failures{shutting-down} counted %d times, want 1", got)
		}
		cancel()
		<-done
	})
}

func TestServerWithoutProbeRunReturnsAtOnce(t *testing.T) {
	s := reflector.NewServer(reflector.ServerOptions{})
	done := make(chan struct{})
	go func() { defer close(done); s.Run(t.Context()) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run without a probe did not return")
	}
	if s.Unreachable() {
		t.Error("a new Server believes the server unreachable")
	}
}

package workqueue

import (
	"testing"
	"testing/synctest"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestExponential(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		opts ExponentialOptions
		want []time.Duration // successive When results for one item
	}{
		{"DoublesFromBaseUpToMax", ExponentialOptions{Base: ms, Max: 10 * ms}, []time.Duration{ms, 2 * ms, 4 * ms, 8 * ms, 10 * ms, 10 * ms}},
		{"Defaults", ExponentialOptions{}, []time.Duration{5 * ms, 10 * ms, 20 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := NewExponential[string](tt.opts)
			for i, want := range tt.want {
				if got := e.When("a"); got != want {
					t.Fatalf("When #%d = %v, want %v", i+1, got, want)
				}
				if n := e.NumRequeues("a"); n != i+1 {
					t.Fatalf("NumRequeues = %d, want %d", n, i+1)
				}
			}
			if got := e.When("b"); got != tt.want[0] {
				t.Fatalf("other item: When = %v, want %v (items are independent)", got, tt.want[0])
			}
			e.Forget("a")
			if n := e.NumRequeues("a"); n != 0 {
				t.Fatalf("NumRequeues after Forget = %d", n)
			}
			if got := e.When("a"); got != tt.want[0] {
				t.Fatalf("When after Forget = %v, want %v", got, tt.want[0])
			}
		})
	}
}

func TestExponentialDoesNotOverflow(t *testing.T) {
	e := NewExponential[int](ExponentialOptions{Base: time.Hour, Max: 1000 * time.Hour})
	var last time.Duration
	for range 2000 {
		last = e.When(1)
		if last <= 0 || last > 1000*time.Hour {
			t.Fatalf("When = %v, outside (0, Max]", last)
		}
	}
	if last != 1000*time.Hour {
		t.Fatalf("When after many failures = %v, want Max", last)
	}
}

func TestBucket(t *testing.T) {
	fc := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	b := NewBucket[string](BucketOptions{QPS: 2, Burst: 2, Clock: fc})
	check := func(want ...time.Duration) {
		t.Helper()
		for i, w := range want {
			if got := b.When("x"); got != w {
				t.Fatalf("When #%d = %v, want %v", i+1, got, w)
			}
		}
	}
	s := time.Second
	check(0, 0, s/2, s) // burst, then one token per 500ms, reserved in turn
	fc.SetTime(fc.Now().Add(s))
	check(s / 2)                          // 2 tokens refilled repaid the debt; next waits
	fc.SetTime(fc.Now().Add(time.Minute)) // refill caps at the burst
	check(0, 0, s/2)
	if n := b.NumRequeues("x"); n != 0 {
		t.Fatalf("NumRequeues = %d, want 0", n)
	}
}

func TestMax(t *testing.T) {
	fc := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	ms := time.Millisecond
	m := NewMax[string](
		NewExponential[string](ExponentialOptions{Base: ms, Max: time.Second}),
		NewBucket[string](BucketOptions{QPS: 10, Burst: 3, Clock: fc}),
	)
	want := []time.Duration{ms, 2 * ms, 4 * ms, 100 * ms, 200 * ms}
	for i, w := range want {
		if got := m.When("a"); got != w {
			t.Fatalf("When #%d = %v, want %v", i+1, got, w)
		}
	}
	if n := m.NumRequeues("a"); n != len(want) {
		t.Fatalf("NumRequeues = %d, want %d", n, len(want))
	}
	m.Forget("a")
	if n := m.NumRequeues("a"); n != 0 {
		t.Fatalf("NumRequeues after Forget = %d", n)
	}
}

func TestAddRateLimitedBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: NewExponential[string](ExponentialOptions{Base: time.Second, Max: time.Minute})})
		defer q.ShutDown()
		start := time.Now()
		for i, wantDelay := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			q.AddRateLimited("a")
			time.Sleep(wantDelay - time.Nanosecond)
			synctest.Wait()
			if got := getNow(q); got != "" {
				t.Fatalf("retry %d: handed out %v early", i+1, time.Since(start))
			}
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			if got := getNow(q); got != "a" {
				t.Fatalf("retry %d: not handed out after %v", i+1, wantDelay)
			}
			q.Done("a")
			start = time.Now()
		}
		if n := q.NumRequeues("a"); n != 3 {
			t.Fatalf("NumRequeues = %d, want 3", n)
		}
		q.Forget("a")
		if n := q.NumRequeues("a"); n != 0 {
			t.Fatalf("NumRequeues after Forget = %d", n)
		}
	})
}

func TestDefaultRateLimiterUsesQueueClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[int]{})
		defer q.ShutDown()
		// The default token bucket allows a burst of 100; the 101st
		// distinct item waits 100ms (10 per second), the exponential part
		// only 5ms.
		for i := range 101 {
			q.AddRateLimited(i)
		}
		time.Sleep(5 * time.Millisecond)
		synctest.Wait()
		if n := q.Len(); n != 100 {
			t.Fatalf("Len() after 5ms = %d, want 100", n)
		}
		time.Sleep(95 * time.Millisecond)
		synctest.Wait()
		if n := q.Len(); n != 101 {
			t.Fatalf("Len() after 100ms = %d, want 101", n)
		}
	})
}

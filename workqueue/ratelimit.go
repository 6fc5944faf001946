package workqueue

import (
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// RateLimiter decides how long a failed item waits before its retry.
// Implementations must be safe for concurrent use.
type RateLimiter[T comparable] interface {
	// When records one more failure of item and returns how long to wait
	// before retrying it.
	When(item T) time.Duration
	// Forget clears item's failure history: the next When starts over.
	Forget(item T)
	// NumRequeues returns how many failures of item are on record.
	NumRequeues(item T) int
}

// AddRateLimited adds item after the delay the queue's rate limiter gives it,
// keeping the item's priority as AddAfter does (so a retry of an item a
// worker got at PriorityLow stays low), and counts a retry.
func (q *Queue[T]) AddRateLimited(item T) {
	q.m.Retries.Inc()
	q.AddAfter(item, q.limiter.When(item))
}

// Forget clears item's failure history in the rate limiter; call it when the
// item was processed successfully. It does not remove the item from the
// queue.
func (q *Queue[T]) Forget(item T) { q.limiter.Forget(item) }

// NumRequeues returns how many rate-limited adds of item the rate limiter has
// on record since the last Forget.
func (q *Queue[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }

// ExponentialOptions configures [NewExponential]. The zero value means 5ms
// doubling up to 1000s.
type ExponentialOptions struct {
	// Base is the delay after the first failure. Zero means 5ms.
	Base time.Duration
	// Max caps the delay. Zero means 1000s.
	Max time.Duration
}

// Exponential is a per-item back-off: the n-th failure of an item since it
// was last forgotten waits Base·2^(n-1), capped at Max. It is safe for
// concurrent use and remembers every failing item until Forget.
type Exponential[T comparable] struct {
	base, max time.Duration

	// mu guards failures.
	mu       sync.Mutex
	failures map[T]int
}

// NewExponential returns a per-item exponential back-off.
func NewExponential[T comparable](opts ExponentialOptions) *Exponential[T] {
	if opts.Base <= 0 {
		opts.Base = 5 * time.Millisecond
	}
	if opts.Max <= 0 {
		opts.Max = 1000 * time.Second
	}
	return &Exponential[T]{base: opts.Base, max: opts.Max, failures: make(map[T]int)}
}

// When implements [RateLimiter].
func (e *Exponential[T]) When(item T) time.Duration {
	e.mu.Lock()
	n := e.failures[item]
	e.failures[item] = n + 1
	e.mu.Unlock()
	d := float64(e.base) * math.Exp2(float64(n))
	if d >= float64(e.max) {
		return e.max
	}
	return time.Duration(d)
}

// Forget implements [RateLimiter].
func (e *Exponential[T]) Forget(item T) {
	e.mu.Lock()
	delete(e.failures, item)
	e.mu.Unlock()
}

// NumRequeues implements [RateLimiter].
func (e *Exponential[T]) NumRequeues(item T) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.failures[item]
}

// BucketOptions configures [NewBucket]. The zero value means 10 per second
// with a burst of 100 on the real clock.
type BucketOptions struct {
	// QPS is the sustained rate, in adds per second. Zero means 10.
	QPS float64
	// Burst is how many adds may go without delay after a quiet spell.
	// Zero means 100.
	Burst int
	// Clock measures the refill. Nil means clock.RealClock{}.
	Clock clock.PassiveClock
}

// Bucket is an overall token bucket shared by all items: each When takes a
// token, and when none is left the caller is told to wait until its token
// will have been refilled. Tokens are reserved, so concurrent callers are
// spread out rather than released together. It keeps no per-item state:
// Forget does nothing and NumRequeues is always 0.
type Bucket[T comparable] struct {
	qps   float64
	burst float64
	clock clock.PassiveClock

	// mu guards tokens and last.
	mu     sync.Mutex
	tokens float64   // may go negative: tokens promised to waiting callers
	last   time.Time // when tokens was last refilled; zero before first use
}

// NewBucket returns a token bucket, full.
func NewBucket[T comparable](opts BucketOptions) *Bucket[T] {
	if opts.QPS <= 0 {
		opts.QPS = 10
	}
	if opts.Burst <= 0 {
		opts.Burst = 100
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Bucket[T]{qps: opts.QPS, burst: float64(opts.Burst), clock: opts.Clock, tokens: float64(opts.Burst)}
}

// When implements [RateLimiter].
func (b *Bucket[T]) When(T) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	if !b.last.IsZero() {
		if elapsed := now.Sub(b.last); elapsed > 0 {
			b.tokens = min(b.burst, b.tokens+elapsed.Seconds()*b.qps)
		}
	}
	b.last = now
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.qps * float64(time.Second))
}

// Forget implements [RateLimiter]; a bucket has no per-item state.
func (b *Bucket[T]) Forget(T) {}

// NumRequeues implements [RateLimiter]; a bucket has no per-item state.
func (b *Bucket[T]) NumRequeues(T) int { return 0 }

// Max combines rate limiters: an item waits for the longest delay any of them
// gives, and its requeue count is the largest any of them records.
type Max[T comparable] struct {
	limiters []RateLimiter[T]
}

// NewMax returns the combination of limiters. It takes the limiters as
// arguments rather than an options struct because they are its only
// setting.
func NewMax[T comparable](limiters ...RateLimiter[T]) *Max[T] {
	return &Max[T]{limiters: limiters}
}

// When implements [RateLimiter]; every limiter records the failure.
func (m *Max[T]) When(item T) time.Duration {
	var d time.Duration
	for _, l := range m.limiters {
		d = max(d, l.When(item))
	}
	return d
}

// Forget implements [RateLimiter].
func (m *Max[T]) Forget(item T) {
	for _, l := range m.limiters {
		l.Forget(item)
	}
}

// NumRequeues implements [RateLimiter].
func (m *Max[T]) NumRequeues(item T) int {
	var n int
	for _, l := range m.limiters {
		n = max(n, l.NumRequeues(item))
	}
	return n
}

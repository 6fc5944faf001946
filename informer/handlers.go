package informer

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/metrics"
)

// handlerSet is a shared informer's handler registrations: a subscriber of
// the cache writer that hands each change to the listener of every
// registered handler (listener: its own queue and goroutine), the resync
// timer's gate, and the end of the initial list for each registration.
//
// The adds of the initial list are handed out in batches (bufferLocked):
// one lock and one wake-up per listener and batch instead of per object.
// Order holds because every other way a listener gets a notification
// (changed, add) and the end of the initial list (markSynced) flush the
// batch first; and since the initial list is popped before anything else,
// its last batch is flushed by markSynced as soon as it is fully applied.
//
// Lock order: the cache writer's mu (held when changed is called, and by
// AddHandler around add), then mu, then a listener's mu, then the
// indexer's.
type handlerSet[T cache.Object] struct {
	// Set by newHandlerSet, then read-only.
	informer string
	keyFunc  cache.KeyFunc[T]
	report   func(error)
	clock    clock.WithTicker
	provider metrics.Provider
	// resync is the period of handlers that set none.
	resync time.Duration
	// cached is the number of cached objects, kept by the cache writer:
	// listeners' merge threshold.
	cached *atomic.Int64
	// minThreshold is every new listener's minimum merge threshold
	// (minMergeThreshold, lowered by tests before any is added).
	minThreshold int
	// wg counts delivery goroutines; stop waits for it.
	wg sync.WaitGroup

	mu        sync.Mutex // guards the fields below
	state     runState
	listeners []*listener[T]
	// initial buffers the adds of the initial list not yet handed out.
	initial []keyedNotification[T]
	// synced is set by markSynced.
	synced bool
	// resyncCheck is the resync timer's period, fixed by start: the
	// shortest handler period then.
	resyncCheck time.Duration
	// next numbers the handlers named by default.
	next int
}

type runState uint8

const (
	notStarted runState = iota
	running
	stopped
)

// initialBatch is how many adds of the initial list are handed to the
// listeners at once.
const initialBatch = 256

func newHandlerSet[T cache.Object](informer string, keyFunc cache.KeyFunc[T], report func(error), clk clock.WithTicker,
	provider metrics.Provider, resync time.Duration, cached *atomic.Int64) *handlerSet[T] {
	return &handlerSet[T]{informer: informer, keyFunc: keyFunc, report: report, clock: clk, provider: provider,
		resync: resync, cached: cached, minThreshold: minMergeThreshold}
}

// changed hands c to the listeners (a change subscriber).
func (s *handlerSet[T]) changed(c change[T]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.n.kind == addNotification && c.n.initial {
		s.bufferLocked(c.key, c.n)
		return
	}
	s.flushLocked()
	for _, l := range s.listeners {
		if c.unchanged && !l.resyncDue {
			continue
		}
		l.add(c.key, c.n)
	}
}

// bufferLocked queues an add of the initial list for the listeners,
// handing them a batch at a time.
func (s *handlerSet[T]) bufferLocked(key string, n notification[T]) {
	if s.initial == nil {
		s.initial = make([]keyedNotification[T], 0, initialBatch)
	}
	s.initial = append(s.initial, keyedNotification[T]{key, n})
	if len(s.initial) == initialBatch {
		s.flushLocked()
	}
}

// flushLocked hands the buffered initial adds to the listeners.
func (s *handlerSet[T]) flushLocked() {
	if len(s.initial) == 0 {
		return
	}
	for _, l := range s.listeners {
		l.addAll(s.initial)
	}
	clear(s.initial)
	s.initial = s.initial[:0]
}

// markSynced records that the initial list has been applied: its last
// adds are handed out, and each listener's initial notifications end
// here (the sync point's onSynced).
func (s *handlerSet[T]) markSynced() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.synced {
		return
	}
	s.synced = true
	s.flushLocked()
	for _, l := range s.listeners {
		l.markSynced()
	}
}

// add registers h, whose initial adds are cached, the objects in the
// cache; the caller holds the cache writer still (hold), so that no change
// is published between listing them and registering h. It returns the
// errors of objects it could not key, for the caller to report once the
// locks are released.
func (s *handlerSet[T]) add(h Handler[T], opts HandlerOptions, cached []T) (*Registration, []error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stopped {
		return nil, nil, fmt.Errorf("informer %s: AddHandler: %w", s.informer, ErrStopped)
	}
	name := opts.Name
	if name == "" {
		name = fmt.Sprintf("handler-%d", s.next)
	}
	s.next++
	reg := &Registration{name: name, synced: make(chan struct{})}

	var hm metrics.HandlerMetrics
	if s.provider != nil {
		hm = s.provider.NewHandlerMetrics(s.informer, name)
	}
	timed := hm.Latency != nil
	l := newListener(h, reg, s.clock, hm.WithDefaults(), timed, s.report, s.cached)
	l.minThreshold = s.minThreshold
	l.resyncPeriod = opts.ResyncPeriod
	if l.resyncPeriod == 0 {
		l.resyncPeriod = s.resync
	}
	if s.state == running && l.resyncPeriod > 0 && l.resyncPeriod < s.resyncCheck {
		l.resyncPeriod = s.resyncCheck
	}

	s.flushLocked() // those are in the cache, listed in cached
	var keyErrs []error
	batch := make([]keyedNotification[T], 0, len(cached))
	for _, obj := range cached {
		key, err := s.keyFunc(obj)
		if err != nil {
			keyErrs = append(keyErrs, fmt.Errorf("informer %s: %w", s.informer, err))
			continue
		}
		batch = append(batch, keyedNotification[T]{key, notification[T]{kind: addNotification, obj: obj, initial: true}})
	}
	l.addAll(batch)
	if s.synced {
		l.markSynced()
	}
	s.listeners = append(s.listeners, l)
	if s.state == running {
		s.startLocked(l, s.clock.Now())
	}
	return reg, keyErrs, nil
}

// remove unregisters reg's handler and stops its listener.
func (s *handlerSet[T]) remove(reg *Registration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, l := range s.listeners {
		if l.reg == reg {
			s.listeners = append(s.listeners[:i], s.listeners[i+1:]...)
			l.stop()
			return nil
		}
	}
	return fmt.Errorf("informer %s: RemoveHandler: %w", s.informer, ErrUnknownRegistration)
}

// start starts every listener's goroutine and returns the resync timer's
// period: the shortest positive resync period among the default and the
// handlers', or zero for none.
func (s *handlerSet[T]) start() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = running
	s.resyncCheck = max(s.resync, 0)
	for _, l := range s.listeners {
		if p := l.resyncPeriod; p > 0 && (s.resyncCheck == 0 || p < s.resyncCheck) {
			s.resyncCheck = p
		}
	}
	now := s.clock.Now()
	for _, l := range s.listeners {
		s.startLocked(l, now)
	}
	return s.resyncCheck
}

// startLocked starts l's delivery goroutine.
func (s *handlerSet[T]) startLocked(l *listener[T], now time.Time) {
	if l.resyncPeriod > 0 {
		l.nextResync = now.Add(l.resyncPeriod)
	}
	s.wg.Go(func() {
		defer close(l.exited)
		l.run()
	})
}

// stop stops every listener, refuses handlers from now on, and waits for
// the delivery goroutines to return.
func (s *handlerSet[T]) stop() {
	s.mu.Lock()
	s.state = stopped
	for _, l := range s.listeners {
		l.stop()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// shouldResync is the resync timer's gate: it marks the handlers whose
// period has come and says whether there is any. The Sync deltas that
// follow go to those handlers only.
func (s *handlerSet[T]) shouldResync() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	due := false
	for _, l := range s.listeners {
		l.resyncDue = false
		if l.resyncPeriod > 0 && !now.Before(l.nextResync) {
			l.resyncDue = true
			l.nextResync = now.Add(l.resyncPeriod)
			due = true
		}
	}
	return due
}

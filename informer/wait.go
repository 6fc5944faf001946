package informer

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/metrics"
)

// ErrIncomparableVersion is matched (errors.Is) by the error of a wait for
// a resource version that cannot be ordered: one that is not a positive
// decimal integer without leading zeros, the form Kubernetes guarantees
// comparable since 1.35 (KEP-5504), or a source whose own versions are not
// of that form. The error also wraps apimachinery's
// resourceversion.InvalidResourceVersion naming the version.
var ErrIncomparableVersion = errors.New("resource version cannot be compared")

// compareVersions orders two resource versions as KEP-5504 defines:
// negative, zero or positive as a is older than, the same as, or newer
// than b.
func compareVersions(a, b string) (int, error) {
	c, err := resourceversion.CompareResourceVersion(a, b)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrIncomparableVersion, err)
	}
	return c, nil
}

// WaitForResourceVersion blocks until the cache reflects resource version
// rv or a later one — every change the server made up to rv is readable
// through Cache, and so from a Lister — and returns nil; typically rv is
// the version a write of the caller's returned (read your own writes).
// It returns ctx.Err() when ctx ends first, ErrStopped when the informer
// stops first, and an error matching ErrIncomparableVersion when rv, or
// the version the informer is at, cannot be compared. Before Run it waits
// for Run.
//
// It waits for every object the informer caches, so also for changes to
// other objects up to rv; WaitForKey can return sooner for one object. A
// version from a write to another resource (every resource shares etcd's
// counter) is reached when the server's next bookmark passes it, about a
// minute on a quiet resource. Handlers may not have been called yet for
// the changes it waited for: they run on their own goroutines.
func (inf *Shared[T]) WaitForResourceVersion(ctx context.Context, rv string) error {
	return inf.waitForVersion(ctx, rv, nil)
}

// WaitForKey blocks until the cache has caught up with resource version
// rv for the object under key: the cached object has version rv or a
// later one, or the whole cache reflects rv (WaitForResourceVersion), which
// covers a deletion. Errors are those of WaitForResourceVersion.
func (inf *Shared[T]) WaitForKey(ctx context.Context, key, rv string) error {
	return inf.waitForVersion(ctx, rv, func() bool {
		obj, ok, err := inf.indexer.GetByKey(key)
		if err != nil || !ok {
			return false
		}
		c, err := compareVersions(obj.GetResourceVersion(), rv)
		return err == nil && c >= 0
	})
}

// waitForVersion waits for rv (see WaitForResourceVersion), or until
// done, when not nil, reports true. It has two phases: until the
// reflector has handed the delta queue rv or later (its version, which
// bookmarks advance too, has reached rv), then until the pop loop has
// processed everything queued at that moment (the queue's barrier:
// cache.DeltaFIFO.Enqueued).
func (inf *Shared[T]) waitForVersion(ctx context.Context, rv string, done func() bool) error {
	if _, err := compareVersions(rv, rv); err != nil {
		return fmt.Errorf("informer %s: wait for resource version %q: %w", inf.name, rv, err)
	}
	var mark uint64
	for reached := false; ; {
		popped := inf.popped.wait() // before the checks, so no change is missed
		var changed <-chan struct{}
		if done != nil && done() {
			return nil
		}
		if !reached {
			if r := inf.reflector.Load(); r != nil {
				changed = r.VersionChanged()
				if last := r.LastSyncResourceVersion(); last != "" {
					c, err := compareVersions(last, rv)
					if err != nil {
						return fmt.Errorf("informer %s: wait for resource version %q: informer at %q: %w", inf.name, rv, last, err)
					}
					if c >= 0 {
						reached, mark = true, inf.fifo.Enqueued()
					}
				}
			} else {
				changed = inf.runningCh
			}
		}
		if reached {
			if inf.fifo.Processed() >= mark {
				return nil
			}
			changed = nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-inf.stoppedCh:
			return fmt.Errorf("informer %s: wait for resource version %q: %w", inf.name, rv, ErrStopped)
		case <-changed:
		case <-popped:
		}
	}
}

// broadcast wakes every goroutine waiting on it at the next notify. The
// zero value is ready; notify costs an atomic load while nobody waits.
type broadcast struct {
	// ch is the channel the next notify closes; nil while nobody waits.
	ch atomic.Pointer[chan struct{}]
}

// wait returns a channel closed by the next notify.
func (b *broadcast) wait() <-chan struct{} {
	for {
		if p := b.ch.Load(); p != nil {
			return *p
		}
		c := make(chan struct{})
		if b.ch.CompareAndSwap(nil, &c) {
			return c
		}
	}
}

// notify wakes every waiter.
func (b *broadcast) notify() {
	if b.ch.Load() == nil {
		return
	}
	if p := b.ch.Swap(nil); p != nil {
		close(*p)
	}
}

// lagSampler measures metrics.InformerMetrics.Lag on one change at a
// time: the reflector's next write after the previous sample is done
// starts one (start, on the reflector's goroutine); the pop loop finishes
// it once everything queued up to that write is processed (finish). It
// costs an atomic load per write and per key processed; the clock is read
// once per sample on each side.
type lagSampler struct {
	// mark is the queue's Enqueued after the sampled write; 0 while no
	// sample is out. Only start sets it, only finish clears it.
	mark atomic.Uint64
	// at is when the sample was taken, in Unix nanoseconds; written by
	// start before mark.
	at atomic.Int64
}

// barrier is what the sampler reads of the delta queue.
type barrier interface {
	Enqueued() uint64
	Processed() uint64
}

// start takes a sample of the write just queued, unless one is out.
func (s *lagSampler) start(q barrier, clk clock.PassiveClock) {
	if s.mark.Load() != 0 {
		return
	}
	s.at.Store(clk.Now().UnixNano())
	s.mark.Store(q.Enqueued())
}

// finish reports the sample's lag to lag once it is processed.
func (s *lagSampler) finish(q barrier, clk clock.PassiveClock, lag metrics.Gauge) {
	m := s.mark.Load()
	if m == 0 || q.Processed() < m {
		return
	}
	lag.Set(clk.Since(time.Unix(0, s.at.Load())).Seconds())
	s.mark.Store(0)
}

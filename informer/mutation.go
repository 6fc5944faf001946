package informer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
)

// MutationError reports that an object in an informer's cache changed after
// it was cached: some code mutated a shared object it should have copied.
type MutationError struct {
	// Key is the object's cache key.
	Key string
}

func (e *MutationError) Error() string {
	return fmt.Sprintf("cached object %q was mutated after it was cached", e.Key)
}

// errNotCopyable: the mutation detector needs T to implement runtime.Object.
var errNotCopyable = errors.New("mutation detector: object type does not implement runtime.Object (DeepCopyObject)")

// mutationDetector keeps a deep copy of every cached object and, every
// period, compares each cached object with its copy, reporting a
// *MutationError for each one that differs (then taking a fresh copy, so a
// mutation is reported once). It finds mutations made between two checks;
// that is a debugging aid, not a proof of absence. It is a subscriber of
// the cache writer (changed) and a stage of the pipeline (run).
type mutationDetector[T cache.Object] struct {
	// Set by newMutationDetector, then read-only.
	report func(error)
	clock  clock.WithTicker
	period time.Duration

	// mu guards cached.
	mu sync.Mutex
	// cached maps a key to the object the cache holds and a copy of it.
	cached map[string]cachedCopy[T]
}

type cachedCopy[T cache.Object] struct {
	obj, copy T
}

// newMutationDetector fails when T's zero value is not a runtime.Object,
// which for pointer types means T cannot be deep-copied. For interface
// types the check is per object, in record.
func newMutationDetector[T cache.Object](report func(error), clk clock.WithTicker, period time.Duration) (*mutationDetector[T], error) {
	var zero T
	if _, ok := any(zero).(runtime.Object); !ok && any(zero) != nil {
		return nil, fmt.Errorf("%w: %T", errNotCopyable, zero)
	}
	return &mutationDetector[T]{report: report, clock: clk, period: period, cached: make(map[string]cachedCopy[T])}, nil
}

func deepCopy[T cache.Object](obj T) (T, bool) {
	ro, ok := any(obj).(runtime.Object)
	if !ok {
		return obj, false
	}
	c, ok := ro.DeepCopyObject().(T)
	return c, ok
}

// changed follows the cache (a change subscriber): it remembers an object
// just cached, and forgets a deleted one.
func (d *mutationDetector[T]) changed(c change[T]) {
	if c.n.kind == deleteNotification {
		d.forget(c.key)
	} else {
		d.record(c.key, c.n.obj)
	}
}

// record remembers obj, just cached under key.
func (d *mutationDetector[T]) record(key string, obj T) {
	c, ok := deepCopy(obj)
	if !ok {
		return
	}
	d.mu.Lock()
	d.cached[key] = cachedCopy[T]{obj: obj, copy: c}
	d.mu.Unlock()
}

// forget drops key, just deleted from the cache.
func (d *mutationDetector[T]) forget(key string) {
	d.mu.Lock()
	delete(d.cached, key)
	d.mu.Unlock()
}

// check compares every cached object with its copy.
func (d *mutationDetector[T]) check() {
	var bad []string
	d.mu.Lock()
	for key, c := range d.cached {
		if !equality.Semantic.DeepEqual(c.obj, c.copy) {
			bad = append(bad, key)
			if fresh, ok := deepCopy(c.obj); ok {
				d.cached[key] = cachedCopy[T]{obj: c.obj, copy: fresh}
			}
		}
	}
	d.mu.Unlock()
	for _, key := range bad {
		d.report(&MutationError{Key: key})
	}
}

// run checks every period until ctx is done, and once more then.
func (d *mutationDetector[T]) run(ctx context.Context) {
	t := d.clock.NewTicker(d.period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			d.check()
			return
		case <-t.C():
			d.check()
		}
	}
}

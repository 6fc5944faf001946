package informer

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/metrics"
)

// change is one change the cache writer applied to the cache, as its
// subscribers see it: the key, and the notification a handler gets for it
// (its kind says whether the object was added, updated or deleted).
type change[T cache.Object] struct {
	key string
	n   notification[T]
	// unchanged: a resync, or a relist that found the object as cached.
	// Only the handlers whose resync is due are told, and nothing a
	// checkpoint would save has changed.
	unchanged bool
}

// cacheWriter is an informer's pop loop, the one writer of its cache. It
// takes one key's deltas at a time from the queue, applies them to the
// indexer, and publishes each change it applied, in order, to its change
// subscribers; after each key it publishes the mark the cache has reached
// (the queue's Reached: the resource version the cache reflects) to its
// mark subscribers.
//
// Subscribers are added before Run (subscribe) and never removed; a
// subscriber that comes and goes (a handler) is one of the handler set's
// listeners. Change subscribers run on the pop loop with mu held, one
// change at a time: they must not block, nor call back into the informer,
// except a Controller's handler, which is the pop loop's own business.
// Mark subscribers run on the pop loop without mu.
type cacheWriter[T cache.Object] struct {
	// Set by newCacheWriter and subscribe, then read-only.
	name     string
	queue    *cache.DeltaFIFO[T]
	indexer  *cache.Indexer[T]
	report   func(error)
	metrics  metrics.InformerMetrics
	onChange []func(change[T])
	onMark   []func(cache.Mark)

	// cached counts the objects in indexer; written by the pop loop only.
	cached atomic.Int64
	// stopped is closed by run when it returns, the queue closed.
	stopped chan struct{}

	// mu serializes applying one key's changes, with their publication,
	// with hold: whoever holds it sees the cache between two changes.
	mu sync.Mutex
}

func newCacheWriter[T cache.Object](name string, queue *cache.DeltaFIFO[T], indexer *cache.Indexer[T],
	report func(error), m metrics.InformerMetrics) *cacheWriter[T] {
	return &cacheWriter[T]{name: name, queue: queue, indexer: indexer, report: report, metrics: m, stopped: make(chan struct{})}
}

// subscribe adds a change subscriber and a mark subscriber (either may be
// nil). Only before run.
func (w *cacheWriter[T]) subscribe(onChange func(change[T]), onMark func(cache.Mark)) {
	if onChange != nil {
		w.onChange = append(w.onChange, onChange)
	}
	if onMark != nil {
		w.onMark = append(w.onMark, onMark)
	}
}

// run applies the queue to the cache until ctx is done or the queue is
// closed, then closes the queue (no write is taken after) and stopped.
func (w *cacheWriter[T]) run(ctx context.Context) {
	defer close(w.stopped)
	defer w.queue.Close()
	for {
		_, err := w.queue.Pop(ctx, w.process)
		if ctx.Err() != nil || w.queue.IsClosed() {
			return
		}
		if err != nil {
			w.report(fmt.Errorf("informer %s: %w", w.name, err))
		}
		w.metrics.QueueDepth.Set(float64(w.queue.Len()))
		w.metrics.Objects.Set(float64(w.cached.Load()))
		m := w.queue.Reached()
		for _, f := range w.onMark {
			f(m)
		}
	}
}

// hold runs fn with no change being applied: what fn reads of the cache
// is the state between two changes, and the next change is published
// after fn returns (AddHandler lists the cache and registers its listener
// in one fn).
func (w *cacheWriter[T]) hold(fn func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fn()
}

// process applies one key's deltas to the cache and publishes them. key
// is the one the queue keyed them by (the informer's key function applied
// to their object). Errors are reported after the lock is released, so
// that an error handler may call back into the informer.
func (w *cacheWriter[T]) process(key string, deltas cache.Deltas[T], initial bool) error {
	if len(deltas) == 0 {
		return nil
	}
	var errs []error
	w.mu.Lock()
	for _, d := range deltas {
		if err := w.applyLocked(key, d, initial); err != nil {
			errs = append(errs, fmt.Errorf("informer %s: %s %q: %w", w.name, d.Type, key, err))
		}
	}
	w.mu.Unlock()
	for _, err := range errs {
		w.report(err)
	}
	return nil
}

// applyLocked applies one delta to the cache and publishes the change.
func (w *cacheWriter[T]) applyLocked(key string, d cache.Delta[T], initial bool) error {
	old, exists, err := w.indexer.GetByKey(key)
	if err != nil {
		return err
	}
	if d.Type == cache.Deleted {
		if !exists {
			return nil // nobody was told of it
		}
		if err := w.indexer.Delete(d.Object); err != nil {
			return err
		}
		w.cached.Add(-1)
		w.publishLocked(change[T]{key: key, n: notification[T]{kind: deleteNotification, obj: d.Object, unknown: d.StateUnknown}})
		return nil
	}
	if !exists {
		if err := w.indexer.Add(d.Object); err != nil {
			return err
		}
		w.cached.Add(1)
		w.publishLocked(change[T]{key: key, n: notification[T]{kind: addNotification, obj: d.Object, initial: initial}})
		return nil
	}
	// A resync, or a relist that found the object unchanged. The very
	// object the cache holds (a resync, or a relist that reused it) is
	// not stored again.
	unchanged := d.Type == cache.Sync ||
		d.Type == cache.Replaced && old.GetResourceVersion() == d.Object.GetResourceVersion()
	if any(old) != any(d.Object) {
		if err := w.indexer.Update(d.Object); err != nil {
			return err
		}
	}
	w.publishLocked(change[T]{key: key, n: notification[T]{kind: updateNotification, old: old, obj: d.Object}, unchanged: unchanged})
	return nil
}

func (w *cacheWriter[T]) publishLocked(c change[T]) {
	for _, f := range w.onChange {
		f(c)
	}
}

// snapshot returns the cached objects and the version they are exactly
// at: taken only while nothing is queued or in flight (the queue has
// reached what was written to it), and given up if anything was queued
// while the objects were listed. ok is false then, or before the cache is
// at any version.
func (w *cacheWriter[T]) snapshot() (items []T, rv string, ok bool) {
	r := w.queue.Reached()
	if r.ResourceVersion == "" || w.queue.Written() != r {
		return nil, "", false
	}
	items = w.indexer.List()
	if w.queue.Written().Seq != r.Seq {
		return nil, "", false
	}
	return items, r.ResourceVersion, true
}

package informer

import (
	"context"
	"strconv"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
)

// instrumentedSource wraps an informer's source to measure its traffic:
// list and watch calls and durations, events by type, and the newest
// resource version seen.
type instrumentedSource[T cache.Object] struct {
	inner listwatch.ListerWatcher[T]
	m     metrics.InformerMetrics
	clock clock.PassiveClock
}

func (s *instrumentedSource[T]) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[T], error) {
	start := s.clock.Now()
	page, err := s.inner.List(ctx, opts)
	s.m.Lists.Inc()
	s.m.ListDuration.Observe(s.clock.Since(start).Seconds())
	if err != nil {
		s.m.ListErrors.Inc()
		return page, err
	}
	setResourceVersion(s.m.LastResourceVersion, page.ResourceVersion)
	return page, nil
}

func (s *instrumentedSource[T]) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[T], error) {
	s.m.Watches.Inc()
	w, err := s.inner.Watch(ctx, opts)
	if err != nil {
		s.m.WatchErrors.Inc()
		return w, err
	}
	return &instrumentedWatch[T]{inner: w, m: s.m, clock: s.clock, start: s.clock.Now()}, nil
}

// instrumentedWatch counts a watch stream's events and observes its
// duration when it ends (first end-of-stream or Close).
type instrumentedWatch[T cache.Object] struct {
	inner listwatch.Watch[T]
	m     metrics.InformerMetrics
	clock clock.PassiveClock
	start time.Time
	// ended makes the duration observed once, whoever ends the stream.
	ended sync.Once
}

func (w *instrumentedWatch[T]) Next() (listwatch.Event[T], error) {
	ev, err := w.inner.Next()
	if err != nil {
		w.end()
		return ev, err
	}
	switch ev.Type {
	case listwatch.Added:
		w.m.AddedEvents.Inc()
	case listwatch.Modified:
		w.m.ModifiedEvents.Inc()
	case listwatch.Deleted:
		w.m.DeletedEvents.Inc()
	case listwatch.Bookmark:
		w.m.BookmarkEvents.Inc()
	case listwatch.Error:
		w.m.ErrorEvents.Inc()
	}
	if ev.Type != listwatch.Error {
		setResourceVersion(w.m.LastResourceVersion, ev.ResourceVersion)
	}
	return ev, nil
}

func (w *instrumentedWatch[T]) Close() error {
	err := w.inner.Close()
	w.end()
	return err
}

func (w *instrumentedWatch[T]) end() {
	w.ended.Do(func() { w.m.WatchDuration.Observe(w.clock.Since(w.start).Seconds()) })
}

// setResourceVersion reports rv when it is a number; resource versions are
// opaque in general, but etcd's are integers that only grow.
func setResourceVersion(g metrics.Gauge, rv string) {
	if _, discard := g.(metrics.Discard); discard || rv == "" {
		return
	}
	if v, err := strconv.ParseUint(rv, 10, 64); err == nil {
		g.Set(float64(v))
	}
}

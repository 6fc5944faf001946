package informer

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/reflector"
)

// pipeline is what Shared and Controller are both built from (the
// package doc draws it): a reflector writing to the delta queue, the
// cache writer popping it into the indexer and publishing each change
// and each mark reached to its subscribers, and the sync point and lag
// sampler among those. What an informer adds (handlers, resync, the
// mutation detector, checkpoints) is a subscriber of the cache writer
// and, if it has a goroutine, a stage Run runs next to the pop loop.
type pipeline[T cache.Object] struct {
	queue *cache.DeltaFIFO[T]
	// writer is what the reflector writes to: the queue, with the lag
	// sampler's hook.
	writer    queueWriter[T]
	cache     *cacheWriter[T]
	synced    *syncPoint
	reflector *reflector.Reflector[T] // set by newReflector
}

// A stage is a part of the pipeline with a goroutine of its own: Run runs
// it until its context ends, and waits for it.
type stage interface {
	run(ctx context.Context)
}

// pipelineOptions are what newPipeline and newReflector build from.
type pipelineOptions[T cache.Object] struct {
	name      string
	source    listwatch.ListerWatcher[T]
	keyFunc   cache.KeyFunc[T] // the user's, nil for the default
	indexers  cache.Indexers[T]
	transform func(T) (T, error)
	report    func(error)
	clock     clock.WithTicker
	provider  metrics.Provider
	metrics   metrics.InformerMetrics
	settings  reflector.Settings
}

// newPipeline builds the queue, the cache and its writer, the sync point
// and the lag sampler; the reflector comes with newReflector, once every
// part it calls into exists.
func newPipeline[T cache.Object](o pipelineOptions[T]) pipeline[T] {
	keyFunc := o.keyFunc
	if keyFunc == nil {
		keyFunc = cache.MetaNamespaceKey[T]
	}
	indexer := cache.NewIndexer(cache.IndexerOptions[T]{KeyFunc: keyFunc, Indexers: o.indexers})
	queue := cache.NewDeltaFIFO(cache.DeltaFIFOOptions[T]{
		KeyFunc:      o.keyFunc, // nil: the default, which it keys in bulk
		KnownObjects: indexer,
		Transform:    o.transform,
	})
	p := pipeline[T]{
		queue:  queue,
		cache:  newCacheWriter(o.name, queue, indexer, o.report, o.metrics),
		synced: newSyncPoint(),
	}
	lag := newLagSampler(queue, o.clock, o.metrics.Lag)
	p.writer = queueWriter[T]{queue: queue, lag: lag, indexer: indexer}
	p.cache.subscribe(nil, p.synced.reached)
	p.cache.subscribe(nil, lag.reached)
	return p
}

// newReflector builds the reflector that fills the queue. resume and
// errors are Options.Resume and Options.ErrorHandler (nil: none, and
// o.report).
func (p *pipeline[T]) newReflector(o pipelineOptions[T],
	resume func(context.Context) (*reflector.Resume[T], error), errors func(error)) error {
	if errors == nil {
		errors = o.report
	}
	r, err := reflector.New(reflector.Options[T]{
		Name:         o.name,
		Source:       o.source,
		Store:        p.writer,
		KeyFunc:      o.keyFunc,
		Settings:     o.settings,
		ErrorHandler: errors,
		Clock:        o.clock,
		Metrics:      o.provider,
		Resume:       resume,
		Confirmed:    func() { p.synced.confirm(p.queue) },
	})
	if err != nil {
		return fmt.Errorf("informer %s: %w", o.name, err)
	}
	p.reflector = r
	return nil
}

// run runs the reflector, the stages and the pop loop until ctx is done,
// and returns once every one of them has returned.
func (p *pipeline[T]) run(ctx context.Context, stages []stage, name string, report func(error)) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		defer p.queue.Close() // ends the pop loop below
		if err := p.reflector.Run(ctx); err != nil && ctx.Err() == nil {
			report(fmt.Errorf("informer %s: reflector: %w", name, err))
		}
	})
	for _, s := range stages {
		wg.Go(func() { s.run(ctx) })
	}
	p.cache.run(ctx)
	cancel()
	wg.Wait()
}

package informer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/checkpoint"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/reflector"
)

// checkpointer is an informer's checkpoint: it reads the file for the
// reflector to resume from (load its header, then read its objects when
// the reflector asks), counts the changes the cache writer
// applies (changed, a change subscriber), and writes the cache when due,
// on its own goroutine (run, a stage): a snapshot of the cache at the
// version the cache writer has exactly reached, taken without stopping
// it.
type checkpointer[T cache.Object] struct {
	// Set by newCheckpointer, then read-only.
	opts   CheckpointOptions[T]
	name   string // the informer's
	report func(error)
	clock  clock.WithTicker
	m      metrics.CheckpointMetrics
	cache  *cacheWriter[T]
	synced *syncPoint

	// id is opts.Identity with its Cluster known; nil until then. Set by
	// load (the reflector's goroutine) or by loop, read by write.
	id atomic.Pointer[checkpoint.Identity]
	// resumed is set by load when the reflector is handed a checkpoint.
	resumed atomic.Bool
	// changes counts the changes applied since the last checkpoint; a
	// send on due (capacity 1) asks for one early.
	changes atomic.Int64
	due     chan struct{}
}

func newCheckpointer[T cache.Object](opts CheckpointOptions[T], name string, report func(error), clk clock.WithTicker,
	m metrics.CheckpointMetrics, w *cacheWriter[T], synced *syncPoint) (*checkpointer[T], error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &checkpointer[T]{opts: opts, name: name, report: report, clock: clk, m: m, cache: w, synced: synced,
		due: make(chan struct{}, 1)}
	if opts.Identity.Cluster != "" {
		id := opts.Identity
		c.id.Store(&id)
	}
	return c, nil
}

// identity returns the checkpoint's identity, asking for the cluster if it
// is not known yet. ok false with a nil error: the cluster cannot be known
// (already reported).
func (c *checkpointer[T]) identity(ctx context.Context) (checkpoint.Identity, bool, error) {
	if id := c.id.Load(); id != nil {
		return *id, true, nil
	}
	cluster, err := c.opts.Cluster(ctx)
	switch {
	case err != nil && (errors.Is(err, listwatch.ErrUnavailable) || ctx.Err() != nil):
		return checkpoint.Identity{}, false, fmt.Errorf("checkpoint: cluster identity: %w", err)
	case err == nil && cluster == "":
		err = errors.New("empty answer")
		fallthrough
	case err != nil:
		c.refuse(nil, fmt.Errorf("informer %s: checkpoint ignored, starting with a full list: %w: cluster identity unknown: %w",
			c.name, checkpoint.ErrOtherCluster, err), metrics.CheckpointRefusedNoCluster)
		return checkpoint.Identity{}, false, nil
	}
	id := c.opts.Identity
	id.Cluster = cluster
	c.id.Store(&id)
	return id, true, nil
}

// load is the reflector's Resume: the checkpoint to resume from, nil for
// none. It reads only the file's header; the reflector reads the objects
// (read) once the server has answered about its version, if it needs
// them. Its error (the cluster not answering yet) makes the reflector ask
// again after a back-off.
func (c *checkpointer[T]) load(ctx context.Context) (*reflector.Resume[T], error) {
	id, ok, err := c.identity(ctx)
	if !ok {
		return nil, err
	}
	h, err := checkpoint.ReadHeader(c.opts.Path, id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		c.refuse(err, fmt.Errorf("informer %s: checkpoint ignored, starting with a full list: %w", c.name, err), "")
		return nil, nil
	case h.ResourceVersion == "":
		err := fmt.Errorf("informer %s: checkpoint %s ignored, starting with a full list: %w: no resource version",
			c.name, c.opts.Path, checkpoint.ErrCorrupt)
		c.refuse(err, err, "")
		return nil, nil
	}
	return &reflector.Resume[T]{
		ResourceVersion: h.ResourceVersion,
		Read:            func() ([]T, error) { return c.read(id, h) },
		SkipExpired:     c.opts.SkipExpired,
	}, nil
}

// read reads the objects of the checkpoint whose header load read, for
// the reflector. A file that fails now (corrupt past its header, or
// replaced since) is refused and counted here; the reflector reports the
// error and lists.
func (c *checkpointer[T]) read(id checkpoint.Identity, h checkpoint.Header) ([]T, error) {
	snap, err := checkpoint.Read(c.opts.Path, id, c.opts.Codec)
	if err == nil && snap.ResourceVersion != h.ResourceVersion {
		err = fmt.Errorf("%w: checkpoint %s replaced while starting: its version was %s, now %s",
			checkpoint.ErrCorrupt, c.opts.Path, h.ResourceVersion, snap.ResourceVersion)
	}
	if err != nil {
		c.m.Refused(refusal(err)).Inc()
		return nil, fmt.Errorf("informer %s: checkpoint ignored, starting with a full list: %w", c.name, err)
	}
	c.m.Loaded.Inc()
	c.m.LoadedObjects.Set(float64(len(snap.Items)))
	c.m.LoadedAge.Set(c.clock.Since(snap.Written).Seconds())
	c.resumed.Store(true)
	return snap.Items, nil
}

// refuse reports a refused checkpoint and counts it under reason, or under
// the reason cause names when reason is empty.
func (c *checkpointer[T]) refuse(cause, report error, reason string) {
	if reason == "" {
		reason = refusal(cause)
	}
	c.m.Refused(reason).Inc()
	c.report(report)
}

// refusal names the reason of a refused checkpoint for metrics.
func refusal(err error) string {
	switch {
	case errors.Is(err, checkpoint.ErrNotRegular):
		return metrics.CheckpointRefusedNotRegular
	case errors.Is(err, checkpoint.ErrVersion):
		return metrics.CheckpointRefusedVersion
	case errors.Is(err, checkpoint.ErrOtherCluster):
		return metrics.CheckpointRefusedOtherCluster
	case errors.Is(err, checkpoint.ErrMismatch):
		return metrics.CheckpointRefusedMismatch
	case errors.Is(err, reflector.ErrResumeRefused):
		return metrics.CheckpointRefusedServerBehind
	}
	return metrics.CheckpointRefusedCorrupt
}

// reflectorError sees the reflector's errors on their way to the
// informer's handler, to count a checkpoint the server refused.
func (c *checkpointer[T]) reflectorError(err error) {
	if errors.Is(err, reflector.ErrResumeRefused) {
		c.m.Refused(metrics.CheckpointRefusedServerBehind).Inc()
	}
	c.report(err)
}

// changed counts a change applied to the cache (a change subscriber),
// unless it changes nothing a checkpoint saves: an unchanged object, or
// one of the checkpoint's own objects added when resumed (later changes
// of those count).
func (c *checkpointer[T]) changed(ch change[T]) {
	if ch.unchanged || ch.n.kind == addNotification && ch.n.initial && c.resumed.Load() {
		return
	}
	if c.changes.Add(1) == int64(c.opts.Changes) {
		select {
		case c.due <- struct{}{}:
		default:
		}
	}
}

// run writes checkpoints until ctx is done, then, once the cache writer
// has stopped (and closed the queue: nothing changes the cache after),
// the last one.
func (c *checkpointer[T]) run(ctx context.Context) {
	tick := c.clock.NewTicker(c.opts.Interval)
	defer tick.Stop()
	var retry <-chan time.Time // while a checkpoint waits for the queue to drain
	for {
		select {
		case <-ctx.Done():
			<-c.cache.stopped
			if c.pending() && !c.write() {
				c.report(fmt.Errorf("informer %s: no checkpoint written when stopping: changes were still queued (the last one stands)", c.name))
			}
			return
		case <-tick.C():
		case <-c.due:
		case <-retry:
		}
		retry = nil
		if c.changes.Load() == 0 {
			continue
		}
		if _, ok, _ := c.identity(ctx); !ok {
			continue // nothing to write under: the cluster is unknown
		}
		if !c.write() {
			retry = c.clock.After(time.Second)
		}
	}
}

// write writes a checkpoint of the cache, if a snapshot can be taken and
// the cluster is known; false means try again later. Write failures are
// reported (and not retried before the next trigger).
func (c *checkpointer[T]) write() bool {
	id := c.id.Load()
	if id == nil {
		return true // the cluster was never known: no checkpoint can be trusted
	}
	n := c.changes.Load()
	start := c.clock.Now()
	snap, ok := c.take()
	if !ok {
		return false
	}
	if err := checkpoint.Write(c.opts.Path, *id, c.opts.Codec, snap); err != nil {
		c.m.WriteErrors.Inc()
		c.report(fmt.Errorf("informer %s: %w", c.name, err))
		return true
	}
	c.m.Writes.Inc()
	c.m.WriteDuration.Observe(c.clock.Since(start).Seconds())
	if fi, err := os.Stat(c.opts.Path); err == nil {
		c.m.WrittenBytes.Set(float64(fi.Size()))
	}
	c.changes.Add(-n)
	return true
}

// pending reports whether changes were applied since the last checkpoint.
func (c *checkpointer[T]) pending() bool { return c.changes.Load() != 0 }

// take snapshots the cache once the informer has synced, with the version
// the cache is exactly at (cacheWriter.snapshot); false while that version
// is not known.
func (c *checkpointer[T]) take() (checkpoint.Snapshot[T], bool) {
	if !c.synced.done() {
		return checkpoint.Snapshot[T]{}, false
	}
	items, rv, ok := c.cache.snapshot()
	if !ok {
		return checkpoint.Snapshot[T]{}, false
	}
	return checkpoint.Snapshot[T]{ResourceVersion: rv, Items: items, Written: c.clock.Now()}, true
}

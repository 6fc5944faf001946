package informer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/checkpoint"
	"github.com/kinformer/kinformer/reflector"
)

// Defaults of CheckpointOptions.
const (
	DefaultCheckpointInterval = 5 * time.Minute
	DefaultCheckpointChanges  = 10_000
)

// CheckpointOptions turn on an informer's checkpoints: its cache saved to
// a file (see package checkpoint, and its warning about Secrets), and
// read back by the next Run, so that a restarted process starts from what
// it had instead of listing everything.
//
// Writing. The informer writes a checkpoint every Interval if its cache
// changed, as soon as Changes changes have been applied since the last
// one, and when Run ends. A checkpoint is taken only when the delta queue
// is empty, so that the objects are exactly the state at the resource
// version written with them (the informer retries every second while it is
// not); writing happens off the informer's processing goroutine.
//
// Starting from a checkpoint. Run reads the file before anything else. A
// checkpoint that fails any check (truncated, corrupt, of another format
// version, resource, selection, type or encoding) is reported to the
// ErrorHandler, wrapped so that errors.Is matches checkpoint.ErrCorrupt,
// ErrVersion or ErrMismatch, and ignored: the informer starts with a full
// list, as without checkpoints. A good one fills the cache at once, and
// the informer watches from its resource version:
//
//   - Handlers get an OnAdd with isInInitialList set for every object of
//     the checkpoint, as for an initial list: a controller handles them as
//     it handles its initial list after any start.
//   - HasSynced (the informer's and the registrations') stays false until
//     the server has confirmed the checkpoint's version (a watch from it
//     opened, and a one-object list at exactly that version succeeded).
//     The changes made since then then arrive as ordinary notifications.
//   - If the server no longer has that version (410 Gone: the checkpoint is
//     older than its history), the informer lists at once and handlers
//     get only the real differences between the checkpoint and the list:
//     an OnAdd for a new object, an OnUpdate for a changed one (a new
//     resource version), an OnDelete with stateUnknown for one that is
//     gone, and nothing for the objects that did not change (unless their
//     resync is due).
//
// Objects read from a checkpoint go through Transform again, which must
// therefore accept its own output (DropManagedFields does). Identity must
// change whenever what is cached changes in a way it cannot see, such as a
// new Transform.
type CheckpointOptions[T cache.Object] struct {
	// Path is the checkpoint file; empty turns checkpoints off. A
	// kube.Factory informer names it after its Key in the factory's
	// checkpoint directory.
	Path string
	// Identity names what the informer caches; a checkpoint is read only
	// into the same Identity. Type and Encoding, when empty, are T's name
	// and the Codec's.
	Identity checkpoint.Identity
	// Codec encodes the objects. Zero: checkpoint.DefaultCodec (protobuf
	// for built-in types, JSON otherwise).
	Codec checkpoint.Codec[T]
	// Interval is how often a changed cache is written. Zero means
	// DefaultCheckpointInterval.
	Interval time.Duration
	// Changes is how many applied changes trigger a checkpoint before
	// Interval. Zero means DefaultCheckpointChanges; negative, never.
	Changes int
}

// withDefaults fills in the zero fields of checkpoint options that are on.
func (o CheckpointOptions[T]) withDefaults() (CheckpointOptions[T], error) {
	if o.Codec.Encode == nil || o.Codec.Decode == nil {
		c, err := checkpoint.DefaultCodec[T]()
		if err != nil {
			return o, err
		}
		o.Codec = c
	}
	if o.Identity.Type == "" {
		o.Identity.Type = checkpoint.TypeName[T]()
	}
	if o.Identity.Encoding == "" {
		o.Identity.Encoding = o.Codec.Name
	}
	if o.Interval <= 0 {
		o.Interval = DefaultCheckpointInterval
	}
	if o.Changes == 0 {
		o.Changes = DefaultCheckpointChanges
	}
	return o, nil
}

// loadCheckpoint reads the informer's checkpoint, if any, as a state for
// its reflector to resume from. A checkpoint that fails a check is
// reported and ignored.
func (inf *Shared[T]) loadCheckpoint() *reflector.Resume[T] {
	if inf.ckpt.Path == "" {
		return nil
	}
	snap, err := checkpoint.Read(inf.ckpt.Path, inf.ckpt.Identity, inf.ckpt.Codec)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		inf.report(fmt.Errorf("informer %s: checkpoint ignored, starting with a full list: %w", inf.name, err))
		return nil
	case snap.ResourceVersion == "":
		inf.report(fmt.Errorf("informer %s: checkpoint %s ignored, starting with a full list: %w: no resource version",
			inf.name, inf.ckpt.Path, checkpoint.ErrCorrupt))
		return nil
	}
	inf.resumed = true
	return &reflector.Resume[T]{Items: snap.Items, ResourceVersion: snap.ResourceVersion}
}

// checkpointLoop writes checkpoints until ctx is done (Run writes the
// last one).
func (inf *Shared[T]) checkpointLoop(ctx context.Context) {
	tick := inf.clock.NewTicker(inf.ckpt.Interval)
	defer tick.Stop()
	var retry <-chan time.Time // while a checkpoint waits for the queue to drain
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		case <-inf.ckptDue:
		case <-retry:
		}
		retry = nil
		if inf.changes.Load() == 0 {
			continue
		}
		if !inf.writeCheckpoint() {
			retry = inf.clock.After(time.Second)
		}
	}
}

// writeCheckpoint writes a checkpoint of the cache if the informer has
// synced and its queue is empty; false means try again later. Write
// failures are reported (and not retried before the next trigger).
func (inf *Shared[T]) writeCheckpoint() bool {
	n := inf.changes.Load()
	snap, ok := inf.snapshot()
	if !ok {
		return false
	}
	if err := checkpoint.Write(inf.ckpt.Path, inf.ckpt.Identity, inf.ckpt.Codec, snap); err != nil {
		inf.report(fmt.Errorf("informer %s: %w", inf.name, err))
		return true
	}
	inf.changes.Add(-n)
	return true
}

// snapshot takes the cache's objects and the resource version they are
// at, if that version is known: the informer has synced, and every delta
// the reflector queued up to it has been applied (the queue's Enqueued
// equals its Processed before and after reading the version, so no write
// slipped in between).
func (inf *Shared[T]) snapshot() (checkpoint.Snapshot[T], bool) {
	r := inf.reflector.Load()
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if r == nil || !inf.synced {
		return checkpoint.Snapshot[T]{}, false
	}
	enq := inf.fifo.Enqueued()
	if inf.fifo.Processed() != enq {
		return checkpoint.Snapshot[T]{}, false
	}
	rv := r.LastSyncResourceVersion()
	items := inf.indexer.List()
	if inf.fifo.Enqueued() != enq || rv == "" {
		return checkpoint.Snapshot[T]{}, false
	}
	return checkpoint.Snapshot[T]{ResourceVersion: rv, Items: items, Written: inf.clock.Now()}, true
}

// changed counts one change applied to the cache, for checkpoints.
func (inf *Shared[T]) changed() {
	if inf.ckpt.Path == "" {
		return
	}
	if inf.changes.Add(1) == int64(inf.ckpt.Changes) {
		select {
		case inf.ckptDue <- struct{}{}:
		default:
		}
	}
}

// confirmedByServer is the reflector's Confirmed: what the reflector has
// queued reflects the server (a list, or a confirmed checkpoint), so the
// informer may report synced once all of it is applied.
func (inf *Shared[T]) confirmedByServer() {
	inf.confirmMark.Store(inf.fifo.Enqueued() + 1)
	if inf.syncable() {
		inf.markSynced()
	}
}

// syncable reports whether the informer may report synced: the queue has
// handed the initial objects out (its HasSynced), and the server has
// confirmed the cache, with everything queued up to that confirmation
// applied. After a checkpoint whose version expired, the relist's
// differences are queued behind the checkpoint's objects: HasSynced waits
// for them too.
func (inf *Shared[T]) syncable() bool {
	m := inf.confirmMark.Load()
	return m != 0 && inf.fifo.HasSynced() && inf.fifo.Processed() >= m-1
}

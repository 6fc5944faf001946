package informer

import (
	"context"
	"errors"
	"time"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/checkpoint"
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
// Starting from a checkpoint. Run has the reflector read the file's
// header before anything else, off Run's goroutine (Run returns when its context ends,
// whatever the file is). A checkpoint is trusted only for the cluster and
// the objects it was written for: a path that is not a regular file, a
// file truncated or corrupt, of another format version, of another
// cluster (Identity.Cluster, or what Cluster answers), resource,
// selection, type or encoding is reported to the ErrorHandler, wrapped so
// that errors.Is matches checkpoint.ErrNotRegular, ErrCorrupt, ErrVersion,
// ErrOtherCluster or ErrMismatch, counted in
// metrics.CheckpointMetrics.Refused, and ignored: the informer starts with
// a full list, as without checkpoints. Only the file's header (its
// identity and resource version) is read at first; its objects are read,
// and checked whole, once the server has answered a list of one object at
// exactly the checkpoint's resource version, and only if the answer
// calls for them:
//
//   - The server has that version: the cache is filled with the
//     checkpoint's objects, handlers get an OnAdd with isInInitialList set
//     for each, as for an initial list, and the informer watches from that
//     version, so the changes made since then arrive as ordinary
//     notifications. HasSynced turns true once the checkpoint's objects
//     are applied.
//   - The server is behind that version ("too large resource version":
//     the cluster was restored from a backup, or the file comes from a
//     cluster the identity check could not tell apart): the checkpoint is
//     refused (reflector.ErrResumeRefused, reason "server-behind") and
//     nothing of it is read.
//   - The server no longer has that version (410 Gone: the checkpoint is
//     older than its history), with SkipExpired: the informer lists as
//     without a checkpoint, and the file's objects are never read.
//   - The server no longer has that version, without SkipExpired. This
//     is the one case where the file is
//     served before the server has confirmed its content: the cache is
//     filled with it and the informer relists at once, and handlers get
//     the checkpoint's objects as initial adds, then only the real
//     differences the list finds: an OnAdd for a new object, an OnUpdate
//     for a changed one (a new resource version), an OnDelete with
//     stateUnknown for one that is gone, and nothing for the objects that
//     did not change (unless their resync is due). It is safe in the sense
//     that the objects are this cluster's (its identity checked) as they
//     were at an earlier version — what an informer shows after a long
//     disconnection — and HasSynced stays false until the relist is
//     applied, so a controller that waits for sync before acting on its
//     cache never acts on them.
//   - The server does not answer (or answers with another error): the
//     question is asked again after a back-off, and nothing is served
//     meanwhile.
//
// A cluster restored from an etcd backup keeps its identity. Right after
// the restore the server is behind every checkpoint written since the
// backup, which are refused; but a checkpoint read once the restored
// cluster has moved past its version again would be confirmed. Delete the
// checkpoint directory when restoring a cluster from a backup.
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
	// and the Codec's. Its Cluster, when empty, is what Cluster answers.
	Identity checkpoint.Identity
	// Cluster names the cluster the source serves (for a kube.Factory
	// informer, the uid of its kube-system namespace), asked by Run on the
	// reflector's goroutine before a checkpoint is read or written, when
	// Identity.Cluster is empty. An error matching
	// listwatch.ErrUnavailable is retried after a back-off; any other
	// refuses the checkpoint (reason "no-cluster") and the informer starts
	// cold. One of Identity.Cluster and Cluster must be set.
	Cluster func(ctx context.Context) (string, error)
	// Codec encodes the objects. Zero: checkpoint.DefaultCodec (protobuf
	// for built-in types, JSON otherwise).
	Codec checkpoint.Codec[T]
	// Interval is how often a changed cache is written. Zero means
	// DefaultCheckpointInterval.
	Interval time.Duration
	// Changes is how many applied changes trigger a checkpoint before
	// Interval. Zero means DefaultCheckpointChanges; negative, never.
	Changes int
	// SkipExpired: when the server no longer has the checkpoint's version,
	// list as without one instead of reading the file and relisting over
	// it. Reading an expired checkpoint pays for objects that are costly
	// to decode (full objects: the relist hands back the file's unchanged
	// objects instead of decoding them again, and its peak memory stays
	// below a cold start's); for small ones (views) decoding the file
	// costs what it saves, and only delays the list (bench/README.md,
	// warm restarts). kube.Factory sets it for views.
	SkipExpired bool
}

// withDefaults fills in the zero fields of checkpoint options that are on.
func (o CheckpointOptions[T]) withDefaults() (CheckpointOptions[T], error) {
	if o.Identity.Cluster == "" && o.Cluster == nil {
		return o, errors.New("no cluster: set Identity.Cluster or Cluster, so that a checkpoint of another cluster is never read")
	}
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

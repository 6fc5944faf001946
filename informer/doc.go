// Package informer turns a source of objects into a local, indexed cache
// plus change notifications.
//
// [Shared] is the shared informer: one reflector lists and watches the
// source, one goroutine applies each change to the cache, and any number of
// handlers, added and removed at any time, are told about each change on
// goroutines of their own. [Controller] is the plain informer: the same
// cache, one [Handler] called in order on the processing goroutine. Both
// are configured by one options struct each ([Options],
// [ControllerOptions]), with the list-and-watch tuning in
// [reflector.Settings], and both offer the same reads: Cache, HasSynced,
// WaitForCacheSync and LastSyncResourceVersion. They are built from the
// same parts (see The pipeline below).
//
// Read your own writes: a controller that wrote an object and got its
// resourceVersion back waits with Shared.WaitForResourceVersion (the whole
// cache) or Shared.WaitForKey (one object) until the cache, and so every
// Lister over it, shows that write. Resource versions are compared as
// Kubernetes guarantees since 1.35 (KEP-5504); one that cannot be compared
// is an error matching ErrIncomparableVersion.
//
// The cache has one writer, the informer. Cache returns a
// [cache.Reader], which has every read method and no write method; a
// [Lister] reads it with typed, label-filtered results. Objects handed to
// handlers and read from the cache are shared with every other reader and
// must not be mutated; copy them first.
//
// Relists hold one copy. A relist (after a watch could not resume: an
// expired version, a restarted apiserver, a checkpoint older than the
// server's history) is applied as it arrives: each page of a paged list,
// or each object of a streaming list, is queued when it is read, and the
// processing goroutine updates the cache while later pages are still on
// the wire. Keys the list did not name are deleted when it ends, with
// their final state unknown. So the old content and the whole new list
// are never held together. During a relist a reader of the cache sees,
// key by key, the old object or the listed one, and objects deleted from
// the server only once the list ends; handlers get the notifications a
// whole-list replace would give (an update for a changed object, an add
// for a new one, a delete for a missing one), spread over the relist
// rather than after it. A relist that fails midway deletes nothing; what
// it applied is the server's newer state and stays. The first list, with
// nothing cached to hold twice, is applied whole, so HasSynced still means
// "everything listed has been processed".
//
// Resync is the informer's own timer: it re-delivers cached objects to the
// handlers whose resync period has come, without talking to the source.
//
// # The pipeline
//
// Both informers are built from the same parts. The reflector writes the
// source's changes to the delta queue, each with the resource version it
// brings (an object's own, a list's, a bookmark's), and the queue records
// the version with what it queues. The cache writer, the informer's one
// goroutine that writes the cache, pops one key's changes at a time,
// applies them, and publishes each applied change, and after each key the
// mark the cache has reached: the queue's Reached, the one answer to
// "which version does the cache reflect". Everything else subscribes:
//
//	source ─list/watch─▶ reflector ─(obj@rv, list@rv, bookmark@rv)─▶ delta queue
//	                                                  records each mark (seq, rv) │
//	                                                                          Pop │
//	                                                                              ▼
//	Cache(), Lister ◀─read── indexer ◀─apply── cache writer (the pop loop, the one writer)
//	                                                  │
//	         ┌────────────────────────────────────────┴────────────────┐
//	         │ each change, in order, under the                        │ after each key, the mark
//	         ▼ writer's lock                                           ▼ reached: the version the
//	  handler set ─▶ per-handler queue ─▶ handler                      cache reflects
//	  (Controller: its one Handler, inline)                  sync point ─▶ HasSynced
//	  mutation detector                  [own goroutine]     lag sampler ─▶ Lag metric
//	  checkpointer: counts changes       [own goroutine]     version waiters ─▶ WaitForResourceVersion,
//	                                                           WaitForKey, the checkpointer's snapshot
//
//	resync timer [own goroutine] ─▶ Sync deltas into the delta queue
//
// The sync point is the queue's mark when the reflector confirmed that
// what it queued reflects the server; HasSynced turns true once the cache
// has reached it. A wait for a version returns once the cache has reached
// it. A checkpoint is the cache listed while the cache has reached all
// that was queued, at that mark's version. A feature is a new subscriber,
// never a field or a branch of the cache writer.
//
// Informers for a kube-apiserver are usually obtained from kube.NewFactory,
// which shares them by resource, namespace and selectors; NewShared is for
// any other source, or for an informer nobody else should share.
package informer

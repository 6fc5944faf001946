// Package cache holds the storage layer every informer stands on: key
// functions, the indexer and its read-only view, and the queues (FIFO,
// DeltaFIFO) that sit between a reflector and the code that processes its
// changes.
//
// Everything here is generic over the stored type T, which must satisfy
// [Object]. Objects handed out by a store are shared with every other reader
// and must not be mutated; copy them first.
//
// # Stores
//
// [NewIndexer] is the one constructor for stores: a plain [Store] is an
// [Indexer] without indexes. It computes keys with a [KeyFunc]
// ([MetaNamespaceKey] by default, [NameKey] for cluster-scoped objects) and
// keeps every index current on each write. Its fast paths are documented
// methods: [Indexer.GetByNamespaceName] (no key built, no lock taken),
// [Indexer.Len], and [Indexer.Reserve] to size storage for a coming list.
//
// An Indexer has one writer. Everyone else reads it through a [Reader],
// from [Indexer.Reader]: a struct with every read method and no write
// method, which is what informers hand out, so that the compiler keeps
// handlers from writing to a cache.
//
// [ExpirationStore] forgets objects after a TTL (or any [ExpirationPolicy])
// on an injectable clock; [UndeltaStore] pushes its whole content to a
// function after every change.
//
// # Writers
//
// A reflector writes to a [Writer]: the source's changes with the resource
// version each brings, whole lists (Replace) and lists applied as they
// arrive ([RelistSession]), and bookmarks. A Store keeps no version; a
// [StoreWriter] makes any Store a Writer that does, and [DeltaFIFO] is
// one.
//
// # Queues
//
// [DeltaFIFO] records every change to an object as a [Delta] (Added,
// Updated, Deleted, Replaced, Sync) and hands the [Deltas] of one key at a
// time to a process function; its doc comment lists the rules it keeps.
// [FIFO] keeps only the latest state of each object. Both serialize Pop,
// honour context cancellation and Close, re-queue an item whose process
// function returns an error wrapping [ErrRequeue], and report [HasSynced]
// once the first relist has been processed. A DeltaFIFO also records the
// version with what it queues: [DeltaFIFO.Reached] is the [Mark] (position
// and resource version) its consumer has reached, the one answer to
// "which version does the consumer's state reflect".
//
// # Errors
//
// Bad input is an error, never a panic. A write of one object that fails
// leaves the store or queue as it was: a nil object or an empty name
// ([ErrInvalidObject]), a key function's or Transform's error (wrapped), an
// object outside a store's namespace ([ErrWrongNamespace],
// [*NamespaceError]), an index function's error ([ErrIndexFunc],
// [*IndexFuncError]). A Replace of a whole list skips each item it cannot
// use, applies the rest, and returns a [*SkippedError] matching
// [ErrSkipped] that names every skipped item: one bad object never keeps a
// list out. Malformed keys give a [*KeyError] matching [ErrInvalidKey].
package cache

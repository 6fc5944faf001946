// Package clientgo presents a kinformer shared informer as client-go's
// cache.SharedIndexInformer, for libraries and code written against
// client-go's informer interfaces.
//
//	inf, err := clientgo.New(clientgo.Options[*corev1.Pod]{
//		Informer: informer.Options[*corev1.Pod]{Source: src, ResyncPeriod: time.Minute},
//	})
//	var sii cache.SharedIndexInformer = inf // hand it to any client-go consumer
//
// New either builds the kinformer informer itself (Options.Informer), so that
// everything client-go lets a creator configure before Run — SetTransform,
// SetWatchErrorHandler — works, or wraps one that already exists
// (Options.Shared, typically from a kube.Factory), whose transform and error
// handler were fixed when it was made: those two setters then fail.
//
// # What client-go users see
//
//   - Handlers (AddEventHandler and its variants) get OnAdd, OnUpdate and
//     OnDelete with the cached objects, typed as T inside an interface{}.
//     A delete whose final state was missed arrives as
//     cache.DeletedFinalStateUnknown{Key, Obj}, Obj the last known T, exactly
//     as client-go delivers it.
//   - Each registration has its own HasSynced and HasSyncedChecker, true once
//     the handler has returned from the adds of the initial list (or, for a
//     handler added later, of the objects cached when it was added).
//   - Resync periods follow client-go's rules: zero means no resync, periods
//     under one second are raised to one second, a handler added after Run
//     resyncs no faster than the informer's resync check period, and an
//     informer built with no resync period (Options.Informer.ResyncPeriod
//     zero) resyncs no handler. A wrapped informer (Options.Shared) keeps
//     kinformer's rules instead: AddEventHandler takes the informer's own
//     default period, and a handler with a period resyncs even if the
//     informer has none.
//   - GetIndexer and GetStore return a read-only client-go Indexer over the
//     informer's cache, with its indexes; AddIndexers adds indexes.
//   - A server that refuses streaming lists (before Kubernetes 1.34, or with
//     the WatchList gate off) is listed from instead, and the watch error
//     handler is not told: client-go does the same.
//
// # The cache is read-only
//
// The informer is its cache's only writer. The Indexer returned by GetIndexer
// answers every read; its writes (Add, Update, Delete, Replace) change nothing
// and return an error matching ErrReadOnly, since client-go's signatures let
// them fail. Bookmark, the one write without an error result, panics with a
// message naming ErrReadOnly: only a reflector calls it, and wiring this cache
// into a reflector is a programming error. Resync returns nil, as client-go's
// own informer cache does: it writes nothing. Objects returned are shared
// with the cache and every handler and must not be mutated, as with
// client-go.
//
// # Proven by client-go's own tests
//
// client-go v0.37.2's tools/cache/shared_informer_test.go runs, unchanged,
// against client-go's informer and against this adapter (upstream/cache;
// go test there prints both counts). The adapter passes every test but
// TestEventPanics, the first difference below.
//
// # Where kinformer differs, on purpose
//
//   - A handler that panics is recovered and reported, and its delivery goes
//     on with the next notification; the panic goes to
//     utilruntime.HandleError, or to Options.Informer.ErrorHandler when set.
//     client-go logs "Observed a panic" through utilruntime.HandleCrash and
//     crashes the process (unless utilruntime.ReallyCrash is false). One
//     handler's bug should not take every other handler and the cache down
//     with it, nor crash-loop a controller on the object that triggers it;
//     the error handler sees the panic (a *informer.HandlerPanicError, with
//     its stack) and can exit if that is the policy. Code that relies on
//     client-go's crash sets Options.CrashOnHandlerPanic, which gives the
//     adapter's handlers client-go's treatment, log line and one-second
//     pause included (upstream TestEventPanics passes with it).
//   - Every other error that is not a list or watch failure (an object a
//     transform rejected, an object that could not be keyed) goes there too;
//     a transform's error skips that one object instead of ending the watch.
//     List and watch failures go to the watch error handler when client-go
//     would send them there (SetWatchErrorHandlerWithContext), and are logged
//     otherwise.
//   - After a relist, an object found unchanged is notified (OnUpdate, old
//     and new of one version) only to handlers whose resync is due; client-go
//     also notifies the handlers of an informer that never resyncs.
//   - A slow handler's backlog is bounded: past a threshold, its pending
//     notifications for one object are merged (see informer.Shared).
//   - Removing a registration twice returns nil, as in client-go, and so
//     does removing it from another informer, where it is not registered:
//     it stays registered with its own. Removal stops delivery at once
//     (pending notifications are dropped).
//
// # Warm restarts, views and shards
//
// client-go's interfaces have no words for them, and need none: they are
// properties of the kinformer informer presented, so they come with an
// informer of a kube.Factory (Options.Shared).
//
//   - Warm restarts: a factory with FactoryOptions.Checkpoints and an
//     informer asked with InformerOptions.Checkpoint starts from the file
//     its last run wrote. Handlers added through the adapter get the
//     file's objects as the initial list (OnAdd with isInInitialList), and
//     what changed while the process was down as ordinary OnUpdate,
//     OnDelete and OnAdd; HasSynced turns true once the file's objects are
//     in. TestRestartFromCheckpoint (e2e) runs it on a real apiserver.
//   - Views: New[V] takes an informer of a projected view V (kube.ViewOf),
//     and handlers and the Indexer then hold *V values. That serves code
//     that reads objects through metav1.Object-like getters or its own
//     type assertion; it does not serve client-go's generated listers and
//     typed informer factories (k8s.io/client-go/listers,
//     k8s.io/client-go/informers), which assert each object to the full
//     Go type (*corev1.Pod) and would find a view instead.
//   - Shards: an informer of a shard (Selection.Shard) is presented like
//     any other, holding only the shard's objects; client-go's
//     SharedIndexInformer has no notion of which part of a resource an
//     informer holds, so nothing in its interface says so. An informer
//     whose ranges change while it runs (package shard/replicas) is not a
//     *informer.Shared and is not presented by this adapter.
package clientgo

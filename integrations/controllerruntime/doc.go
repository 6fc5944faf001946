// Package controllerruntime is a controller-runtime cache (cache.Cache) whose
// informers are kinformer's, for controllers written with controller-runtime:
// one line in the manager's options switches them over, and nothing else in
// them changes.
//
//	mgr, err := manager.New(cfg, manager.Options{NewCache: controllerruntime.New})
//
// New takes controller-runtime's own cache.Options and keeps controller-runtime's
// contract: Get and List (namespaces, label selectors, field selectors on
// indexes added with IndexField, Limit; Continue is refused as controller-runtime
// refuses it), GetInformer and GetInformerForKind returning informers with
// handler registration and per-registration HasSynced, RemoveInformer,
// Start and WaitForCacheSync; typed objects, unstructured.Unstructured and
// metav1.PartialObjectMetadata; ByObject, DefaultNamespaces, the Default*
// settings and SyncPeriod; and controller-runtime's errors (apierrors NotFound
// for a missing object, *cache.ErrCacheNotStarted before Start,
// *cache.ErrResourceNotCached with ReaderFailOnMissingInformer, the scheme's and
// the REST mapper's errors for a kind they do not know). Go-typed objects are
// cached without apiVersion and kind, as controller-runtime's decoder leaves
// them: handlers and reads without a deep copy see them empty, deep-copied
// reads set them. The cache needs no leader election (NeedLeaderElection is
// false), so a cache added to a manager with mgr.Add starts on every replica;
// this holds with DefaultNamespaces and ByObject too, where
// controller-runtime's own caches per namespace and per kind do not say it.
//
// controller-runtime v0.25.2's own pkg/cache test suite, copied into
// upstream/cache with only the constructor changed, passes on this cache as
// on controller-runtime's (272 of 272 specs and 2 of 2 plain tests each);
// one command runs it on both and prints both counts:
//
//	go test -count=1 -v ./upstream/cache
//
// # Opt-ins: what kinformer adds, within controller-runtime's API
//
// New is the one-line switch. NewCache(Options) is the same cache with
// kinformer's opt-ins; views need nothing but AddView. Each is covered by
// an end-to-end test on a real kube-apiserver (view_test.go,
// readyourwrites_test.go, optin_test.go, shards_e2e_test.go), and
// example/optins and example/shards run them.
//
// # Projected views
//
// A struct embedding View[F] declares the fields of F a controller reads
// (`kube:"spec.nodeName"`), and a one-line DeepCopyObject (DeepCopy) makes
// it a client.Object. AddView puts it in the manager's scheme (kind: the
// Go type's name in F's group and version; ViewList[V] beside it). The
// manager's client then Gets it and Lists it into a ViewList, IndexField
// indexes it, and builder.For, Owns and Watches watch it; the cache holds
// an informer of views, decoded straight from the wire, and never the full
// objects (unless something else asks for F). A view is read-only:
// metadata it does not declare reads as empty.
//
//	type PodView struct {
//		controllerruntime.View[*corev1.Pod]
//		NodeName string `kube:"spec.nodeName"`
//	}
//	func (v *PodView) DeepCopyObject() runtime.Object { return controllerruntime.DeepCopy(v) }
//
//	err := controllerruntime.AddView[*PodView](scheme)
//	err = ctrl.NewControllerManagedBy(mgr).For(&PodView{}).Complete(r)
//
// # Read your writes
//
// controller-runtime's client.CacheOptions.EnableReadYourWritesConsistency
// works on this cache as on its own, with nothing to set beyond
// controller-runtime's option: a read through the manager's client after a
// write of the same client waits until the cache holds that write.
// TestReadYourWrites runs it on both caches.
//
// The wait is controller-runtime's, not kinformer's resource-version waits
// (informer.Shared's WaitForKey and WaitForResourceVersion), because
// v0.25.2's seam gives the cache no part in it. The client (client.New,
// which the manager calls) requires only that the cache implement
// cacheapi.Informers; for each kind it reads or writes, it asks the cache
// for the kind's informer (GetInformer), registers on it an event handler
// of its internal consistencyhandler package (AddEventHandler) and waits
// for that registration's HasSyncedChecker. Everything after that happens
// in the handler: a write records the resource version the server
// returned, per object; a read waits until an event the handler was
// given (OnAdd, OnUpdate, OnDelete) carried that version or a later one,
// or, for a delete answered without one (the server returns a status, not
// the object, for most kinds), until an OnDelete of the object's uid.
// The handler asks the informer for nothing else, and no method of the
// cache or its informers is called to wait, so there is nothing the cache
// could implement with kinformer's waits; only a client of its own
// (manager.Options.NewClient) could call them, and even that one would
// have to watch for deletions as the handler does. On this cache, the handler's events arrive only once
// the change is in the cache (kinformer calls handlers after applying
// it), so a read the wait lets through finds the write; what it costs is
// one more handler on each informer the client touches, through which
// every event of the kind passes.
//
// Views: the client keys its waits by kind, so a write of F (a Pod) does
// not make a read of a view of F (a PodView) wait. kinformer's WaitForKey
// on the view's informer would cover it (the view is decoded from the
// same watch), but the seam does not pass it the write's version.
//
// # Checkpoints (warm restarts)
//
// Options.Checkpoints.Dir saves each informer's cache (built-in types and
// views) to a file and starts the next run from it: the server confirms the
// file's resource version, the cache is synced at once, and the watch from
// there brings what changed while the manager was down. Files of another
// cluster, kind, selection or type are refused (the informer starts cold);
// Secrets only with AllowSecrets. See Checkpoints. cmd/crbench measures it
// (controller-runtime-warm-restart-time): package podview's reconciler
// restarted from its pod views' checkpoint reconciled 20,000 pods in 0.17
// of the time of controller-runtime's default cache started cold, at a
// fifth of its CPU.
//
// # Progress metrics
//
// Options.Metrics (give it controller-runtime's metrics.Registry, which the
// manager serves) receives kinformer's reflector, informer and checkpoint
// metrics (kinformer_reflector_*, kinformer_informer_*) and, per informer,
// its sync progress and stalls: kinformer_cache_synced, _listing,
// _sync_listed_objects, _sync_expected_objects, _stalled_watches_total and
// _list_fallbacks_total, labelled by the informer's kind.
//
// # Shards
//
// Options.Shards shares the objects of the types it lists between the
// replicas of a manager: each replica caches, and its controllers
// reconcile, only the objects in the hash ranges it owns (by uid, or by
// namespace), and the replicas agree on who owns what through one Lease
// each (package shard/replicas: a range moves only once its new owner has
// synced it; a replica that stops hands its ranges over; one that dies is
// left out of the split half a Lease duration after its last renewal).
//
//	NewCache: controllerruntime.NewCache(controllerruntime.Options{
//		Shards: map[client.Object]controllerruntime.Shard{&corev1.Pod{}: {
//			Replicas: replicas.GroupOptions{Name: "my-operator-pods", Namespace: "my-operator", Identity: podName},
//		}},
//	}),
//
//	err := ctrl.NewControllerManagedBy(mgr).For(&corev1.Pod{}).
//		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
//		Complete(r)
//
// Every replica must run its controller, so leader election must be off
// for it (NeedLeaderElection false as above, or no leader election in the
// manager); the cache itself needs none. Each owned range is listed and
// watched on its own with the apiserver's shard selector: with the
// ShardedListAndWatch feature gate on (Kubernetes 1.36, alpha), only the
// range's objects cross the wire; otherwise the source drops the others
// (every range's watch then carries every object, so keep Slots small).
//
// Reads (Get, List, indexes) of a sharded type see the owned ranges only:
// an object of another replica's share is NotFound. Handlers (builder.For,
// Owns, Watches) get an add, with isInInitialList true, for every object
// of a range the replica acquires, then its updates and deletes; when a
// range is released they are told nothing, because the object was not
// deleted: a delete would make a controller's reconcile, and any delete
// predicate, act on an object that still exists. A key queued just before
// its release reconciles to NotFound from the cache, which a reconciler
// already reads as "nothing to do here" (client.IgnoreNotFound); cleanup
// belongs in finalizers, as always. For a moment during a handoff, two
// replicas own a range; a controller that cannot tolerate that checks
// what it writes against the server (resource versions, as usual).
//
// The cache's WaitForCacheSync, and each handler's HasSynced, wait until
// the replica has joined its group and owned its whole share once. A
// replica that starts while no member of its group owns ranges waits
// Replicas.SettlePeriod (default one Lease poll) for the others before it
// takes any, so that managers started together each list their share
// only: raise it if yours start further apart. Joining a running group
// takes no such wait.
// Indexes (IndexField) of a sharded type must be added before the cache
// starts, as the manager's setup does. Sharded types cannot be combined
// with DefaultNamespaces or ByObject Namespaces (a shard spans every
// namespace: narrow it with selectors), nor with NewInformer; they have no
// checkpoints and no kinformer_cache_* progress series (the group's
// replica metrics go to Options.Metrics instead). example/shards runs three
// replica processes and kills one.
//
// # Where the speed comes from
//
// Built-in types (pods, config maps, deployments, ... the list is in
// builtins.go) are listed and watched by kinformer's typed source: protobuf
// decoded straight into the Go types with repeated strings interned and
// byte-identical parts (containers, volumes, managedFields, ...) shared
// between objects (kube.SourceOptions.ShareMutableParts), and kept in
// kinformer's cache. Unstructured objects come from its dynamic source,
// metadata-only objects from its metadata source. Other Go types (custom
// resources with Go types) are read as unstructured JSON and converted into
// their type before they are cached, which costs what controller-runtime's
// own decoding does.
//
// # Shared parts
//
// The main library shares byte-identical parts only when asked
// (kube.SourceOptions.ShareMutableParts is off by default), because a
// caller that mutates one object would change every object sharing the
// part. The adapter always asks, and handlers may see shared parts, because
// controller-runtime's contract already forbids that mutation: its cache
// hands handlers and UnsafeDisableDeepCopy reads the cached objects
// themselves, so a handler that mutates one corrupts controller-runtime's
// cache too, and Get and List, whose results controllers do mutate, return
// deep copies, which share nothing. Sharing changes how far such a bug
// reaches (every object with the same part, not one), not whether code is
// correct; it is also what brings the cache to half of controller-runtime's
// memory. Run the tests with KINFORMER_CACHE_MUTATION_DETECTOR=true to find
// a handler that mutates what it is given.
//
// # Deep copies
//
// As in controller-runtime, Get and List return deep copies of the cached
// objects unless UnsafeDisableDeepCopy is set (per call, per object kind or by
// default); then they return the cached objects' contents, shared with the
// cache and every handler, which must not be mutated. Handlers always get the
// cached objects. The copy is most of a read's cost: with the pods of package
// podsummary, a Get takes 19 µs and 12.8 KB copied against 8.6 µs and 6.6 KB
// shared, and a List of 1,000 pods 8.4 ms and 7.4 MB against 0.8 ms and
// 1.3 MB (controller-runtime's cache: 26 µs / 12 µs and 9.5 ms / 0.7 ms).
// BenchmarkGet and BenchmarkList measure it:
//
//	go test -run - -bench 'Get|List' -benchmem ./integrations/controllerruntime
//
// # Where it differs from controller-runtime's cache, on purpose
//
// A handler that panics does not end the process. Under controller-runtime's
// cache, client-go logs "Observed a panic" through the handler's logger and
// panics again, which crashes the manager (unless utilruntime.ReallyCrash is
// turned off). kinformer recovers the panic, reports it to
// utilruntime.HandleError as an *informer.HandlerPanicError carrying the
// value and the handler's stack, counts it (the informer's Panics metric),
// and goes on delivering to that handler and every other. The reason: one
// object that makes a handler panic would otherwise crash-loop every
// controller of the manager, and each restart lists every cached kind from
// the apiserver again; a manager that survives keeps reconciling the rest. A
// program that relies on the crash keeps it with one error handler,
// registered before the manager starts:
//
//	utilruntime.ErrorHandlers = append(utilruntime.ErrorHandlers,
//		func(_ context.Context, err error, _ string, _ ...any) {
//			var p *informer.HandlerPanicError
//			if errors.As(err, &p) {
//				panic(p) // ends the process, as client-go would
//			}
//		})
//
// TestConformanceHandlerPanic runs a panicking handler on both caches, and on
// kinformer's with that error handler.
//
// client-go's HandlerOptions.Logger (AddEventHandlerWithOptions) is accepted
// and not used: client-go logs a handler's panic through it, and kinformer
// reports panics as errors instead (above).
//
// Options.NewInformer is honoured as controller-runtime honours it: when
// set, every informer of the cache is the client-go SharedIndexInformer it
// returns (given a client-go ListerWatcher of the kind with the cache's
// namespace and selectors, an empty object of the kind, the resync period
// and the namespace index), and the cache reads and watches through it.
// kinformer's own informers are then not used, nor anything they bring
// (shared parts, interning, protobuf decoded straight into the Go types):
// NewInformer is for tests with fake informers and for wrapping client-go's
// informer. TestConformanceNewInformer runs it on both caches.
package controllerruntime

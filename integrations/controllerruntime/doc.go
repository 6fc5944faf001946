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
// the REST mapper's errors for a kind they do not know).
//
// # Where the speed comes from
//
// Built-in types (pods, config maps, deployments, ... the list is in
// builtins.go) are listed and watched by kinformer's typed source: protobuf
// decoded straight into the Go types with repeated strings interned and
// byte-identical parts (containers, volumes, managedFields, ...) shared
// between objects (kube.SourceOptions.ShareMutableParts), and kept in
// kinformer's cache. Sharing is invisible through the cache's reads, which
// deep-copy by default; handlers and UnsafeDisableDeepCopy reads get cached
// objects, which controller-runtime already forbids mutating. Unstructured objects come from its dynamic source,
// metadata-only objects from its metadata source. Other Go types (custom
// resources with Go types) are read as unstructured JSON and converted into
// their type before they are cached, which costs what controller-runtime's
// own decoding does.
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
package controllerruntime

// Package kubetest is a fake kube-apiserver for unit tests of code built on
// kube.Factory, or on client-go's clients: an HTTP server on loopback that
// keeps objects in memory, speaks the apiserver's protocol and wire
// formats, and injects the faults of listwatch/fake, so a controller can be
// tested, informers and all, without a control plane.
//
//	srv := kubetest.New(t, kubetest.Options{Objects: []runtime.Object{pod}})
//	f, err := kube.NewFactory(srv.Config(), kube.FactoryOptions{})
//	client, err := kubernetes.NewForConfig(srv.Config())
//	...
//	srv.ResetWatches() // and see the controller carry on
//
// New starts a server for a test and closes it when the test ends; Start is
// the same for code without a testing.TB (an example, a TestMain), which
// closes it itself. The package's example tests a small controller.
//
// # What it serves
//
// Resources: every kind of client-go's scheme that can be listed (each
// group and kind at one version, the newest: apps/v1 deployments,
// autoscaling/v2 horizontalpodautoscalers), with the apiserver's scope,
// plurals and common short names; and the custom resources of
// Options.CustomResources, stored as *unstructured.Unstructured without a
// schema. The server starts empty (no namespaces): Options.Objects seeds it.
//
// Discovery (/api, /apis, /api/v1, /apis/GROUP, /apis/GROUP/VERSION), so
// kube.Resolve, client-go's RESTMapper and kubectl-style names work;
// /version; /healthz, /livez and /readyz.
//
// Verbs: get, list, watch, create, update (PUT), patch (JSON merge patch,
// JSON patch, and strategic merge patch for built-in kinds) and delete,
// on objects and on their status subresource. Writes follow the
// apiserver's generic rules: uid, creationTimestamp, generateName and
// generation are set by the server; an update carrying a stale
// resourceVersion is 409 Conflict; an update that changes nothing is no
// write (no new version, no event). See write.go for the details.
//
// Wire formats: JSON for everything; protobuf
// (application/vnd.kubernetes.protobuf, and its length-delimited frames for
// watches) for built-in kinds; either as PartialObjectMetadata or
// PartialObjectMetadataList when Accept asks for it, which is what
// metadata-only informers and client-go's metadata client ask for. All of
// it is encoded by apimachinery's serializers.
//
// Resource versions, as etcd and the apiserver keep them: one counter for
// the whole server, every write one version. Lists at "" and "0" read the
// current state; an exact version (resourceVersionMatch=Exact, or a
// version with a limit) reads the state then, from history;
// NotOlderThan reads the current state; paging with limit and continue
// reads one snapshot across pages. Watches start at a version and replay
// the changes after it, send bookmarks when asked for
// (allowWatchBookmarks), end after timeoutSeconds on Options.Clock, and
// serve streaming lists (sendInitialEvents=true: an ADDED event per object,
// then the bookmark annotated k8s.io/initial-events-end, then changes). A
// version newer than the server's is "too large" (504 with cause
// ResourceVersionTooLarge); one older than the compaction point (Compact,
// Options.CompactionWindow) is 410 Expired, on a watch as an ERROR event.
// List and watch parameters are decoded and validated by the apiserver's
// own code (422 Invalid for a combination it refuses).
//
// Selectors: label selectors, all of their syntax; field selectors on
// metadata.name and metadata.namespace for every resource, and on the
// fields kube-apiserver supports for pods (spec.nodeName, status.phase,
// ...), events, namespaces, nodes and secrets. A watch with a selector
// sees an object that stops matching as DELETED and one that starts
// matching as ADDED, as from the apiserver.
//
// # Faults and the request log
//
// RefuseNext and RefuseFor reset the connections of requests to come
// ("connection reset by peer"); UnavailableNext and UnavailableFor answer
// them 503 "shutting down". ResetWatches, CloseWatches and ExpireWatches
// break, end cleanly, or end with 410 every open watch (a fault fired
// with no watch open is played on the next one). DropBookmarks keeps
// bookmarks back. Compact forgets history. Requests lists every request
// received, with its verb and answer, for tests to assert on.
//
// # What it does not do
//
// No admission (objects in namespaces that do not exist are accepted, no
// quota, no webhooks), no validation beyond kind, name and namespace, and
// no defaulting (client-go's scheme has none). No per-resource strategies:
// a write to an object changes its status too, and generation counts every
// change outside metadata and status. No server-side apply (415) and no
// managedFields, no finalizers or graceful deletion (a delete is
// immediate), no garbage collection of dependents, no deletecollection, no
// dryRun (400). No conversion between versions (a kind is served at one
// version), no Table output (kubectl get's columns: Accept falls through to
// the next type, else 406), no subresources but status (scale, log, exec,
// eviction, binding), no aggregated discovery (clients fall back to the
// documents above, as for older servers), no CBOR, no authentication or
// authorization. Bookmarks come only when a test calls Bookmark, and at the
// end of a streaming list: an informer waiting for a version its own
// resource never reaches (WaitForResourceVersion of another resource's
// write) needs one. Nothing runs controllers: pods are not scheduled and
// stay as written.
//
// # When to use testenv instead
//
// kubetest answers in microseconds and needs nothing but Go, so it suits
// unit tests of controllers and of code written against informers and
// clients. Where a test depends on what only the real apiserver does —
// admission, validation, defaulting, server-side apply, garbage
// collection, CRD schemas and pruning, the watch cache's timing, etcd's
// compaction, an apiserver restart, performance — use the real control
// plane of the testenv module (testenv.Start), as the end-to-end tests do.
package kubetest

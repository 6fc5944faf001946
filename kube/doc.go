// Package kube holds kinformer's sources for a real kube-apiserver: each
// implements listwatch.ListerWatcher[T] over HTTP.
//
//   - Typed serves a built-in resource as its Go type (for example
//     *corev1.Pod). The resource is resolved from the Go type; the wire format
//     is protobuf, with JSON accepted when a server answers in JSON.
//   - Dynamic serves any resource, custom resources included, as
//     *unstructured.Unstructured over JSON.
//   - Metadata serves any resource as *metav1.PartialObjectMetadata, for
//     callers that need only names, labels, owners and versions.
//
// NewFactory hands out shared informers over these sources, the generic
// equivalent of client-go's generated factories: Informer[T] and Lister[T]
// for built-in types, DynamicInformer and MetadataInformer for any
// resource, one per Key (source kind, resource, Selection), all sharing
// one HTTP client and one rate limiter; Acquire, AcquireDynamic and
// AcquireMetadata hand out the same informers with a reference count (a
// Ref), for those that come and go while the others run. Which objects are
// cached — the
// namespace and selectors — is a Selection, set once: in SourceOptions
// for a source made by hand, in InformerOptions for a factory's informer.
//
// View (and ViewInformer, AcquireView, ViewLister in a factory) serves a
// built-in resource as a projected view: a struct declaring only the
// fields a controller reads, by path in the full type (`kube:"spec.nodeName"`),
// decoded straight from the wire with every other field skipped. The view
// is checked against the full type when it is built (ErrInvalidView).
// DynamicView (DynamicViewInformer, AcquireDynamicView) does the same for a
// custom resource over JSON, checking the view against the schema of the
// resource's CustomResourceDefinition (ErrNoSchema when there is none). A
// Selection's Shard restricts any source to ranges of the hash of
// metadata.uid or the namespace (KEP-5866): sent to the server, applied by
// the source when the server ignores it.
//
// LoadConfig finds a kubeconfig the usual way, and Resolve maps a user's
// string ("po", "deploy", "foos.example.com") to a resource through discovery.
//
// Every failure a source returns is mapped onto the listwatch errors
// (ErrExpired, ErrTooLargeResourceVersion, ErrUnavailable,
// ErrStreamingListUnsupported) where one fits, and otherwise keeps the
// server's *apierrors.StatusError reachable through errors.As, with its HTTP
// status and message intact. On a watch, an event whose object is of another
// kind than the source serves comes out of Next as a *listwatch.DecodeError
// (the stream goes on); bytes that do not decode end the stream with an
// error wrapping ErrMalformed. Sources never retry: back-off belongs to the
// reflector.
//
// Sources made from the same rest.Config share client-go's cached transport
// when the config allows it; SourceOptions.HTTPClient shares one client
// explicitly, and a RateLimiter set in the config is shared by every source
// made from it (otherwise each source has its own QPS/Burst bucket).
//
// Objects returned by List and Watch are owned by the caller; a source keeps
// no reference to them as a whole. A Typed source interns their strings,
// unless SourceOptions.DisableInterning is set: strings repeated across
// objects (managedFields' managers, label and annotation keys and values,
// owner references, and for pods and pod templates images and container
// fields) are shared between the objects it decodes, and its bounded
// tables keep a reference to one copy of each; strings being immutable,
// no caller can tell. SourceOptions.ShareMutableParts, off by default,
// shares mutable values too: managedFields' FieldsV1, resource lists, and
// a pod's containers, volumes, tolerations, security context, affinity and
// status conditions, decoded once per distinct encoding and shared whole
// (slices included) by the pods that carry the same bytes. Objects of such
// a source must not be mutated in place, the contract of objects in a
// cache anyway; DeepCopy gives a private copy.
package kube

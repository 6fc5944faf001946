// Package kube serves Kubernetes objects from a real kube-apiserver to
// kinformer's informers, through one door: the Go type asked for says
// where the objects come from.
//
//	f, err := kube.NewFactory(cfg, kube.FactoryOptions{})
//	pods, key, err := kube.Informer(ctx, f, kube.InformerOptions[*corev1.Pod]{
//		Selection: kube.Selection{Namespace: "shop", LabelSelector: "app=web"},
//	})
//	f.Start(ctx)
//	synced := f.WaitForCacheSync(ctx) // synced[key] says whether pods synced
//
// Informer returns a Factory's shared informer of T (one per Key: resource,
// Selection and type), Acquire the same with a reference count (a Ref, for
// informers that come and go while the others run), and Source a
// listwatch.ListerWatcher[T] for a reflector or an informer built by hand.
// Listers come from the informer: informer.NewLister(inf.Cache()). For each
// the type T and the options' Resource choose the source:
//
//   - a built-in type (*corev1.Pod, *appsv1.Deployment, any type of
//     k8s.io/api that can be listed): its own resource, resolved from the
//     type, protobuf on the wire (JSON accepted);
//   - *unstructured.Unstructured: any resource, custom resources included,
//     named by Resource (Resolve maps "widgets.example.com" to one), over
//     JSON;
//   - *metav1.PartialObjectMetadata: any resource named by Resource,
//     reduced by the server to names, labels, annotations, owners and
//     versions, so far fewer bytes cross the wire and stay in memory;
//   - a projected view of a built-in type F: a struct embedding ViewOf[F]
//     and declaring only the fields a controller reads, by path in F
//     (`kube:"spec.nodeName"`), decoded straight from the wire with every
//     other field skipped;
//   - a projected view of a custom resource: a struct embedding ViewMeta,
//     with Resource naming the resource, checked against the schema of its
//     CustomResourceDefinition (ErrNoSchema when there is none).
//
// Projected views. A view's fields are read from the paths their kube tags
// give, by JSON names, dotted ("spec.nodeName"); a path ending in a map's
// key reads that entry ("metadata.labels.app"). A nested struct, or a
// slice of them, is a view of the object at its path, its own paths
// relative to it; an embedded struct without a tag (ViewOf, ViewMeta) is
// read from the object's root. A map of strings may be held as Labels,
// sorted pairs in about half a map's memory (ViewMeta.Labels is one).
// Every exported field needs a tag
// (`kube:"-"` leaves one alone); unexported fields are not touched. A view
// is checked against its resource before anything is made: a path that
// does not exist, or a field that cannot hold what is there, is an error
// wrapping ErrInvalidView naming the view, the field and the path. A view
// of a built-in type can be checkpointed: the file holds each view as the
// protobuf of the fields it declares, and names the view's declaration,
// so a file written by another declaration of the view is refused. A view
// reading one field in two of its fields, and a view of a custom resource,
// cannot (InformerOptions.Checkpoint is then an error). A view is not
// checked by the mutation detector unless it implements runtime.Object.
//
// A Selection's Shard restricts any source to ranges of
// the hash of metadata.uid or the namespace (KEP-5866): sent to the
// server, applied by the source when the server ignores it.
//
// LoadConfig finds a kubeconfig the usual way, and Resolve maps a user's
// string ("po", "deploy", "foos.example.com") to a Resource through
// discovery.
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
// made from it (otherwise each source has its own QPS/Burst bucket). A
// Factory shares one client and one rate limiter between all its sources.
//
// Objects returned by List and Watch are owned by the caller; a source keeps
// no reference to them as a whole. A source of a built-in type interns
// their strings, unless SourceOptions.DisableInterning is set: strings
// repeated across objects (managedFields' managers, label and annotation
// keys and values, owner references, and for pods and pod templates images
// and container fields) are shared between the objects it decodes, and its
// bounded tables keep a reference to one copy of each; strings being
// immutable, no caller can tell. SourceOptions.ShareMutableParts, off by
// default, shares mutable values too: managedFields' FieldsV1, resource
// lists, and a pod's containers, volumes, tolerations, security context,
// affinity and status conditions, decoded once per distinct encoding and
// shared whole (slices included) by the pods that carry the same bytes.
// Objects of such a source must not be mutated in place, the contract of
// objects in a cache anyway; DeepCopy gives a private copy.
//
// The decoding machinery (wire walkers, codecs, interning, projection)
// lives in kube/internal; nothing of it is part of this package's API.
//
// Importing kube does not link client-go's kubernetes/scheme, nor its
// discovery and restmapper packages, which import it: a Go type finds its
// resource in a table made from that scheme, REST clients decode errors
// knowing only metav1's types, and Resolve reads discovery itself. Of
// k8s.io/api, a program links core/v1, apps/v1 and batch/v1 (interning
// knows their workloads) and whatever its own types import; an idle
// process holds a little over half the memory of client-go's
// (process-baseline-rss in bench/).
package kube

package kube

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube/internal/source"
	"github.com/kinformer/kinformer/shard"
)

// ErrInvalidView is wrapped by the error of a view type that cannot be
// read from its resource: a field whose path does not exist in the full
// type (or the custom resource's schema), whose Go type cannot hold what
// is there, or that has no kube tag. The error names the view, the field
// and the path.
var ErrInvalidView = source.ErrInvalidView

// ErrNoSchema means a view of a custom resource has no schema to check
// the view against: the resource is not a custom resource (a view of a
// built-in type embeds ViewOf), or its CustomResourceDefinition does not
// serve the version asked for.
var ErrNoSchema = source.ErrNoSchema

// ViewMeta is the metadata most controllers read, for embedding in a
// view struct: with it, a pointer to the view is a cache.Object,
// informer.Labeled (for a Lister) and shard.Object (for Selection.Shard).
// Embedded without a kube tag, its fields' paths are read from the
// object's root. Labels are held as Labels, sorted pairs in about half
// the memory of a map (v.Labels.Get("app")). Annotations, creation time, finalizers and the other
// fields of metav1.ObjectMeta are left out: declare those a view needs
// (`kube:"metadata.annotations"`).
//
// A view of a custom resource embeds ViewMeta and names its resource in
// InformerOptions.Resource (SourceOptions.Resource); a view of a built-in
// type embeds ViewOf instead, which holds a ViewMeta.
type ViewMeta struct {
	Name              string                  `kube:"metadata.name"`
	Namespace         string                  `kube:"metadata.namespace"`
	UID               types.UID               `kube:"metadata.uid"`
	ResourceVersion   string                  `kube:"metadata.resourceVersion"`
	Generation        int64                   `kube:"metadata.generation"`
	DeletionTimestamp *metav1.Time            `kube:"metadata.deletionTimestamp"`
	Labels            Labels                  `kube:"metadata.labels"`
	OwnerReferences   []metav1.OwnerReference `kube:"metadata.ownerReferences"`
}

// GetName returns metadata.name.
func (m *ViewMeta) GetName() string { return m.Name }

// GetNamespace returns metadata.namespace.
func (m *ViewMeta) GetNamespace() string { return m.Namespace }

// GetUID returns metadata.uid.
func (m *ViewMeta) GetUID() types.UID { return m.UID }

// GetResourceVersion returns metadata.resourceVersion.
func (m *ViewMeta) GetResourceVersion() string { return m.ResourceVersion }

// GetGeneration returns metadata.generation.
func (m *ViewMeta) GetGeneration() int64 { return m.Generation }

// GetDeletionTimestamp returns metadata.deletionTimestamp.
func (m *ViewMeta) GetDeletionTimestamp() *metav1.Time { return m.DeletionTimestamp }

// GetLabels returns metadata.labels in a new map, which the caller owns:
// it serves code written for maps (informer.Lister's selectors, say).
// Read m.Labels to look labels up without making one.
func (m *ViewMeta) GetLabels() map[string]string { return m.Labels.Map() }

// GetOwnerReferences returns metadata.ownerReferences.
func (m *ViewMeta) GetOwnerReferences() []metav1.OwnerReference { return m.OwnerReferences }

var (
	_ informer.Labeled = (*ViewMeta)(nil)
	_ shard.Object     = (*ViewMeta)(nil)
)

// ViewOf, embedded in a struct, makes a pointer to that struct a projected
// view of the built-in type F (for example *corev1.Pod): a type declaring
// only the fields a controller reads, decoded straight from the wire with
// every other field skipped, never allocated. Informer, Acquire and Source
// of such a type serve F's resource as views:
//
//	type PodView struct {
//		kube.ViewOf[*corev1.Pod]
//		NodeName   string          `kube:"spec.nodeName"`
//		Containers []ContainerView `kube:"spec.containers"`
//		Phase      corev1.PodPhase `kube:"status.phase"`
//	}
//	type ContainerView struct {
//		Name  string `kube:"name"`
//		Image string `kube:"image"`
//	}
//
// Each field's kube tag is its path in F, by JSON names, dotted; a nested
// view struct's paths are relative to its own. ViewOf holds a ViewMeta,
// so the view has its name, namespace, uid, labels, owners and versions.
// Lists and watches are decoded from protobuf (or JSON, when the server
// answers JSON). See the package documentation ("Projected views") for
// the rules of a view's declaration.
//
// The view is checked against F before anything is made: a field whose
// path does not exist in F, whose Go type cannot hold F's field there, or
// that is exported without a kube tag is an error wrapping ErrInvalidView
// naming the view, the field and the path.
type ViewOf[F cache.Object] struct {
	ViewMeta
}

// viewOf is implemented by every type that embeds a ViewOf: it returns F.
type viewOf interface {
	viewedType() reflect.Type
}

func (ViewOf[F]) viewedType() reflect.Type { return reflect.TypeFor[F]() }

// viewedType returns F when T is a pointer to a struct embedding ViewOf[F].
func viewedType[T cache.Object]() (reflect.Type, bool) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct || !t.Implements(reflect.TypeFor[viewOf]()) {
		return nil, false
	}
	return reflect.New(t.Elem()).Interface().(viewOf).viewedType(), true
}

// isRuntimeObject reports whether T can be deep-copied by the mutation
// detector.
func isRuntimeObject[T cache.Object]() bool {
	return reflect.TypeFor[T]().Implements(reflect.TypeFor[runtime.Object]())
}

package controllerruntime

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
)

// View, embedded in a struct, makes a pointer to that struct a projected
// view of the built-in type F that controller-runtime can read and watch:
// a client.Object whose fields are only those a controller declares, by
// path in F (kube.ViewOf's rules), decoded straight from the wire with
// every other field skipped. The manager's client reads it (Get, and List
// into a ViewList), and builder.For, Owns and Watches watch it; only the
// views are cached, never the full objects.
//
//	type PodView struct {
//		controllerruntime.View[*corev1.Pod]
//		NodeName string          `kube:"spec.nodeName"`
//		Phase    corev1.PodPhase `kube:"status.phase"`
//	}
//
//	func (v *PodView) DeepCopyObject() runtime.Object { return controllerruntime.DeepCopy(v) }
//
// The view type needs its own DeepCopyObject (DeepCopy writes it in one
// line) and must be added to the manager's scheme with AddView. View holds
// a kube.ViewMeta: name, namespace, uid, resource version, generation,
// deletion time, labels and owners. The other metadata of metav1.Object
// (annotations, finalizers, creation time, managed fields, ...) read as
// empty and their setters do nothing: declare a field for what the view
// needs (`kube:"metadata.annotations"`). A view is read-only: it cannot be
// written to the server (Create, Update and Patch of a view fail in the
// scheme's conversion).
type View[F client.Object] struct {
	kube.ViewOf[F]
	typeMeta metav1.TypeMeta
}

// GetObjectKind returns the view's apiVersion and kind, as set by the
// cache's reads (the view's kind in F's group and version).
func (v *View[F]) GetObjectKind() schema.ObjectKind { return &v.typeMeta }

// SetName sets metadata.name.
func (v *View[F]) SetName(name string) { v.Name = name }

// SetNamespace sets metadata.namespace.
func (v *View[F]) SetNamespace(ns string) { v.Namespace = ns }

// SetUID sets metadata.uid.
func (v *View[F]) SetUID(uid types.UID) { v.UID = uid }

// SetResourceVersion sets metadata.resourceVersion.
func (v *View[F]) SetResourceVersion(rv string) { v.ResourceVersion = rv }

// SetGeneration sets metadata.generation.
func (v *View[F]) SetGeneration(g int64) { v.Generation = g }

// SetDeletionTimestamp sets metadata.deletionTimestamp.
func (v *View[F]) SetDeletionTimestamp(t *metav1.Time) { v.DeletionTimestamp = t }

// SetLabels sets metadata.labels (a copy of l: the view holds them as
// kube.Labels).
func (v *View[F]) SetLabels(l map[string]string) { v.Labels = kube.LabelsOf(l) }

// selectorLabels returns the labels as held, for matching a selector
// without the map GetLabels makes (see labelsOf).
func (v *View[F]) selectorLabels() labels.Labels { return v.Labels }

// labelsOf returns obj's labels for a selector to match: a view's own
// kube.Labels, any other object's map.
func labelsOf(obj client.Object) labels.Labels {
	if v, ok := obj.(interface{ selectorLabels() labels.Labels }); ok {
		return v.selectorLabels()
	}
	return labels.Set(obj.GetLabels())
}

// SetOwnerReferences sets metadata.ownerReferences.
func (v *View[F]) SetOwnerReferences(r []metav1.OwnerReference) { v.OwnerReferences = r }

// The metadata a View does not hold: read as empty, set to nothing.

func (v *View[F]) GetGenerateName() string                       { return "" }
func (v *View[F]) SetGenerateName(string)                        {}
func (v *View[F]) GetSelfLink() string                           { return "" }
func (v *View[F]) SetSelfLink(string)                            {}
func (v *View[F]) GetCreationTimestamp() metav1.Time             { return metav1.Time{} }
func (v *View[F]) SetCreationTimestamp(metav1.Time)              {}
func (v *View[F]) GetDeletionGracePeriodSeconds() *int64         { return nil }
func (v *View[F]) SetDeletionGracePeriodSeconds(*int64)          {}
func (v *View[F]) GetAnnotations() map[string]string             { return nil }
func (v *View[F]) SetAnnotations(map[string]string)              {}
func (v *View[F]) GetFinalizers() []string                       { return nil }
func (v *View[F]) SetFinalizers([]string)                        {}
func (v *View[F]) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }
func (v *View[F]) SetManagedFields([]metav1.ManagedFieldsEntry)  {}

// ViewList is the list of a view type V, for List:
//
//	var pods controllerruntime.ViewList[*PodView]
//	err := mgr.GetClient().List(ctx, &pods, client.InNamespace("shop"))
//
// AddView adds it to the scheme beside V.
type ViewList[V client.Object] struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []V `json:"items"`
}

// DeepCopyObject returns a copy of the list whose items are the items'
// own deep copies.
func (l *ViewList[V]) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &ViewList[V]{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]V, len(l.Items))
		for i, item := range l.Items {
			out.Items[i] = item.DeepCopyObject().(V)
		}
	}
	return out
}

// viewType is what the cache knows of a view type: its kind, the kind of
// the full type, and how to make its informer.
type viewType struct {
	typ  reflect.Type // V
	gvk  schema.GroupVersionKind
	full schema.GroupVersionKind
	make func(entryConfig) (entry, error)
}

// views holds every view type added with AddView, by its kind (the kind
// follows from the type: its name in F's group and version), so that every
// cache and mapper can recognise it.
var views sync.Map // schema.GroupKind -> *viewType

// AddView adds the view type V to scheme: V under the kind named after V's
// Go type (PodView) in F's group and version, and ViewList[V] under that
// kind plus "List". It checks V against F first (an error wrapping
// kube.ErrInvalidView names the field that does not fit). The manager's
// cache, client and builder then take V as they take F; the cache of this
// package serves it from an informer of views. Adding the same V again is
// a no-op; another type of the same name for the same F is an error.
func AddView[V client.Object](scheme *runtime.Scheme) error {
	vt := reflect.TypeFor[V]()
	if vt.Kind() != reflect.Pointer || vt.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("AddView: %v is not a pointer to a struct", vt)
	}
	fullType, ok := viewedBy(vt)
	if !ok {
		return fmt.Errorf("AddView: %v does not embed controllerruntime.View", vt)
	}
	// A view of a built-in type makes no request when its source is made:
	// this only checks the declaration.
	if _, err := kube.Source[V](context.Background(), &rest.Config{Host: "https://127.0.0.1:1"}, kube.SourceOptions{}); err != nil {
		return fmt.Errorf("AddView: %w", err)
	}
	full, err := apiutil.GVKForObject(reflect.New(fullType.Elem()).Interface().(runtime.Object), scheme)
	if err != nil {
		return fmt.Errorf("AddView: the viewed type %v is not in the scheme: %w", fullType, err)
	}
	gvk := full.GroupVersion().WithKind(vt.Elem().Name())
	v := &viewType{typ: vt, gvk: gvk, full: full, make: func(cfg entryConfig) (entry, error) {
		return newTypedEntry(cfg, func(set shard.Set) (listwatch.ListerWatcher[V], error) {
			return kube.Source[V](context.Background(), cfg.restConfig, cfg.viewSourceOptions(set))
		})
	}}
	if old, loaded := views.LoadOrStore(gvk.GroupKind(), v); loaded && old.(*viewType).typ != vt {
		return fmt.Errorf("AddView: kind %s is already the view type %v", gvk, old.(*viewType).typ)
	}
	if t, ok := scheme.AllKnownTypes()[gvk]; ok {
		if t != vt.Elem() {
			return fmt.Errorf("AddView: kind %s is already the type %v in the scheme", gvk, t)
		}
		return nil
	}
	scheme.AddKnownTypeWithName(gvk, reflect.New(vt.Elem()).Interface().(runtime.Object))
	scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &ViewList[V]{})
	return nil
}

// viewedBy returns F when vt embeds a View[F] (through kube.ViewOf's
// viewedType, which View promotes).
func viewedBy(vt reflect.Type) (reflect.Type, bool) {
	v, ok := reflect.New(vt.Elem()).Interface().(interface{ viewedFullType() reflect.Type })
	if !ok {
		return nil, false
	}
	return v.viewedFullType(), true
}

func (v *View[F]) viewedFullType() reflect.Type { return reflect.TypeFor[F]() }

// viewFor returns the view type of gvk's group and kind, if it is one.
func viewFor(gvk schema.GroupVersionKind) (*viewType, bool) {
	v, ok := views.Load(gvk.GroupKind())
	if !ok {
		return nil, false
	}
	vt := v.(*viewType)
	return vt, vt.gvk == gvk
}

// newViewEntry makes the informer of obj's view type, if obj is a view.
func newViewEntry(cfg entryConfig, obj runtime.Object) (entry, bool, error) {
	v, ok := viewFor(cfg.gvk)
	if !ok || reflect.TypeOf(obj) != v.typ {
		return nil, false, nil
	}
	e, err := v.make(cfg)
	return e, true, err
}

// viewSourceOptions are the source options of a view: a view shares no
// parts between objects (it holds only what it declares).
func (c entryConfig) viewSourceOptions(set shard.Set) kube.SourceOptions {
	so := c.sourceOptions(set)
	so.ShareMutableParts = false
	return so
}

// viewMapper answers for the kinds of views what the mapper answers for
// their full types, so that the cache, the client and the builder can ask
// whether a view is namespaced and which resource serves it.
type viewMapper struct{ apimeta.RESTMapper }

func withViews(m apimeta.RESTMapper) apimeta.RESTMapper {
	if _, ok := m.(viewMapper); ok || m == nil {
		return m
	}
	return viewMapper{m}
}

// viewOfKind returns the view type of gk, a view's kind or its list's.
func viewOfKind(gk schema.GroupKind) (*viewType, bool) {
	if v, ok := views.Load(gk); ok {
		return v.(*viewType), true
	}
	if kind, ok := strings.CutSuffix(gk.Kind, "List"); ok {
		if v, ok := views.Load(schema.GroupKind{Group: gk.Group, Kind: kind}); ok {
			return v.(*viewType), true
		}
	}
	return nil, false
}

func (m viewMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*apimeta.RESTMapping, error) {
	vt, ok := viewOfKind(gk)
	if !ok {
		return m.RESTMapper.RESTMapping(gk, versions...)
	}
	mapping, err := m.RESTMapper.RESTMapping(vt.full.GroupKind(), vt.full.Version)
	if err != nil {
		return nil, err
	}
	out := *mapping
	out.GroupVersionKind = vt.gvk
	return &out, nil
}

func (m viewMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*apimeta.RESTMapping, error) {
	if _, ok := viewOfKind(gk); !ok {
		return m.RESTMapper.RESTMappings(gk, versions...)
	}
	mapping, err := m.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	return []*apimeta.RESTMapping{mapping}, nil
}

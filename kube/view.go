package kube

import (
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/project"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
)

// ErrInvalidView is wrapped by the error of a view type that cannot be
// read from its resource: a field whose path does not exist in the full
// type, whose Go type cannot hold what is there, or that has no kube tag.
// The error names the view, the field and the path.
var ErrInvalidView = errors.New("invalid view")

// ViewMeta is the metadata most controllers read, for embedding in a
// view struct: with it, a pointer to the view is a cache.Object,
// informer.Labeled (for Lister) and shard.Object (for Selection.Shard).
// Embedded without a kube tag, its fields' paths are read from the
// object's root. Annotations, creation time, finalizers and the other
// fields of metav1.ObjectMeta are left out: declare those a view needs
// (`kube:"metadata.annotations"`).
type ViewMeta struct {
	Name              string                  `kube:"metadata.name"`
	Namespace         string                  `kube:"metadata.namespace"`
	UID               types.UID               `kube:"metadata.uid"`
	ResourceVersion   string                  `kube:"metadata.resourceVersion"`
	Generation        int64                   `kube:"metadata.generation"`
	DeletionTimestamp *metav1.Time            `kube:"metadata.deletionTimestamp"`
	Labels            map[string]string       `kube:"metadata.labels"`
	OwnerReferences   []metav1.OwnerReference `kube:"metadata.ownerReferences"`
}

func (m *ViewMeta) GetName() string                             { return m.Name }
func (m *ViewMeta) GetNamespace() string                        { return m.Namespace }
func (m *ViewMeta) GetUID() types.UID                           { return m.UID }
func (m *ViewMeta) GetResourceVersion() string                  { return m.ResourceVersion }
func (m *ViewMeta) GetGeneration() int64                        { return m.Generation }
func (m *ViewMeta) GetDeletionTimestamp() *metav1.Time          { return m.DeletionTimestamp }
func (m *ViewMeta) GetLabels() map[string]string                { return m.Labels }
func (m *ViewMeta) GetOwnerReferences() []metav1.OwnerReference { return m.OwnerReferences }

var (
	_ informer.Labeled = (*ViewMeta)(nil)
	_ shard.Object     = (*ViewMeta)(nil)
)

// View returns a source of the built-in resource served as F (for
// example *corev1.Pod) whose objects are projected views of type T, a
// pointer to a struct declaring only the fields the caller reads:
//
//	type PodView struct {
//		kube.ViewMeta
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
// view struct's paths are relative to its own. Lists and responses are
// decoded straight from protobuf (or JSON, when the server answers JSON)
// into T: fields T does not declare are skipped, never allocated. See the
// package documentation ("Projected views") for the rules of a view's
// declaration and what a view cannot do.
//
// T is checked against F here: a field whose path does not exist in F,
// whose Go type cannot hold F's field there, or that is exported without
// a kube tag makes View fail with an error wrapping ErrInvalidView naming
// the view, the field and the path. With opts.Shard set, T must also be a
// shard.Object (embed ViewMeta). Views' strings are interned unless
// opts.DisableInterning; ShareMutableParts does not apply to views.
//
// cfg is copied. The source is safe for concurrent use.
func View[T cache.Object, F cache.Object](cfg *rest.Config, opts SourceOptions) (listwatch.ListerWatcher[T], error) {
	b, plan, proto, err := compileView[T, F]()
	if err != nil {
		return nil, err
	}
	if err := viewShardable[T](opts.Shard); err != nil {
		return nil, err
	}
	c := viewCodec[T](plan, b, b.gvk.GroupVersion().String(), b.gvk.Kind, proto, viewStrings(opts))
	return newSource(cfg, b.gvk.GroupVersion().WithResource(b.resource), b.namespaced, opts, c)
}

// compileView resolves F and compiles the plan reading it into T.
func compileView[T cache.Object, F cache.Object]() (builtin, *project.Plan, bool, error) {
	b, err := resolveBuiltin(reflect.TypeFor[F]())
	if err != nil {
		return builtin{}, nil, false, err
	}
	if err := viewType[T](); err != nil {
		return builtin{}, nil, false, err
	}
	proto := b.itemsTag != 0 && b.listMetaTag != 0 &&
		reflect.PointerTo(b.elem).Implements(reflect.TypeFor[protoMessage]())
	plan, err := project.CompileGo(reflect.TypeFor[T](), b.elem, proto)
	if err != nil {
		return builtin{}, nil, false, fmt.Errorf("kube: %w: %w", ErrInvalidView, err)
	}
	return b, plan, proto, nil
}

// viewType checks that T is a pointer to a struct.
func viewType[T cache.Object]() error {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("kube: %w: %v is not a pointer to a struct", ErrInvalidView, t)
	}
	return nil
}

func viewShardable[T cache.Object](s shard.Set) error {
	if s.IsZero() {
		return nil
	}
	if _, ok := any(*new(T)).(shard.Object); !ok {
		return fmt.Errorf("kube: %w: %v has no GetUID, which a sharded source needs (embed kube.ViewMeta)", ErrInvalidView, reflect.TypeFor[T]())
	}
	return nil
}

func viewStrings(opts SourceOptions) *project.Strings {
	if opts.DisableInterning {
		return nil
	}
	return project.NewStrings()
}

// viewName names view type T in a Key: its package path and name.
func viewName[T cache.Object]() string {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() + "." + t.Name()
}

// isRuntimeObject reports whether T can be deep-copied by the mutation
// detector.
func isRuntimeObject[T cache.Object]() bool {
	return reflect.TypeFor[T]().Implements(reflect.TypeFor[runtime.Object]())
}

// ViewInformer returns the factory's informer of views T of the built-in
// resource served as F (see View), creating it on first use. Its Key has
// Source SourceView and the view's type in View, so two view types of
// one resource and selection are two informers, each with its own cache.
// T is checked against F here (see View); checkpoints are not available
// for views (InformerOptions.Checkpoint is an error), and the factory's
// MutationDetector covers T only if it implements runtime.Object. The
// factory's Transform sees views only if they implement metav1.Object.
func ViewInformer[T cache.Object, F cache.Object](f *Factory, opts InformerOptions[T]) (*informer.Shared[T], error) {
	id, src, err := viewInformerKey[T, F](f, opts)
	if err != nil {
		return nil, err
	}
	return pinned(informerForKey(f, id, opts, src, pinLocked))
}

// AcquireView is ViewInformer with a reference count (see Acquire and
// Ref).
func AcquireView[T cache.Object, F cache.Object](f *Factory, opts InformerOptions[T]) (*Ref[T], error) {
	id, src, err := viewInformerKey[T, F](f, opts)
	if err != nil {
		return nil, err
	}
	return acquireKey(f, id, opts, src)
}

// ViewLister returns a lister over the cache of ViewInformer[T, F](f,
// opts); T needs GetLabels (embed ViewMeta).
func ViewLister[T informer.Labeled, F cache.Object](f *Factory, opts InformerOptions[T]) (informer.Lister[T], error) {
	inf, err := ViewInformer[T, F](f, opts)
	if err != nil {
		return informer.Lister[T]{}, err
	}
	return informer.NewLister(inf.Cache()), nil
}

func viewInformerKey[T cache.Object, F cache.Object](f *Factory, opts InformerOptions[T]) (Key, sourceFunc[T], error) {
	res, err := ResourceFor[F]()
	if err != nil {
		return Key{}, nil, err
	}
	id := Key{Source: SourceView, Resource: res, View: viewName[T]()}
	if _, _, _, err := compileView[T, F](); err != nil {
		return id, nil, err
	}
	if opts.Checkpoint {
		return id, nil, fmt.Errorf("kube: informer %s: checkpoints are not available for views", id)
	}
	return id, func(so SourceOptions) (listwatch.ListerWatcher[T], error) { return View[T, F](f.cfg, so) }, nil
}

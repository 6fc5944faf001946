package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	cgcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/testenv"
)

// ChildKindEnv names the kind a memory or warm view child syncs: a
// millionKind's name ("pods" when unset).
const ChildKindEnv = "KINFORMER_BENCH_CHILD_KIND"

// millionKind is a kind of object the memory children and the million
// scenario can sync: how each side informs on it, how the scenario seeds
// it and what the servers keep per object.
type millionKind struct {
	// name is the resource, as -million-kind and ChildKindEnv take it.
	name string
	// res is the resource (metadata-only informer, the floor's path).
	res kube.Resource
	// serverBytes is what the kube-apiserver keeps per object whatever
	// its watch cache (see apiserverBytesPerPod).
	serverBytes uint64
	// startFull, startView start kinformer's informer of full objects
	// (without managedFields when dropMF) and of the kind's view.
	startFull func(ctx context.Context, cfg *rest.Config, dropMF bool, added func()) (memInformer, error)
	startView func(ctx context.Context, cfg *rest.Config, added func()) (memInformer, error)
	// warmView is the warm view child's informer (see warmViewChild).
	warmView func(ctx context.Context, f *kube.Factory) (synced func(context.Context) bool, keys func() []string, err error)
	// clientGo returns client-go's informer of the kind from a factory.
	clientGo func(informers.SharedInformerFactory) cgcache.SharedIndexInformer
	// create creates objects 0..n-1 through the API; get reads object i
	// back (as the server stores it); stored makes object i as the
	// apiserver would have stored it, from template t, the API-created
	// object i % sidecarTemplates.
	create func(ctx context.Context, cs kubernetes.Interface, n int) error
	get    func(ctx context.Context, cs kubernetes.Interface, i int) (testenv.StoredObject, error)
	stored func(t testenv.StoredObject, i int) testenv.StoredObject
	// describe says what one object holds.
	describe string
}

// podKind is sidecarPod's pods, what the memory scenarios sync.
var podKind = &millionKind{
	name:        "pods",
	res:         kube.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true},
	serverBytes: apiserverBytesPerPod,
	startFull:   startFull[*corev1.Pod],
	startView:   startViewOf[*PodView],
	warmView:    warmViewOf[*PodView],
	clientGo: func(f informers.SharedInformerFactory) cgcache.SharedIndexInformer {
		return f.Core().V1().Pods().Informer()
	},
	create: func(ctx context.Context, cs kubernetes.Interface, n int) error {
		return createPods(ctx, cs, n, sidecarPod)
	},
	get: func(ctx context.Context, cs kubernetes.Interface, i int) (testenv.StoredObject, error) {
		want := sidecarPod(i, 0)
		return cs.CoreV1().Pods(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
	},
	stored: func(t testenv.StoredObject, i int) testenv.StoredObject {
		return storedSidecarPod(t.(*corev1.Pod), i)
	},
	describe: "a pod (two containers, managedFields of two managers, a Running status)",
}

// replicaSetKind is sidecarReplicaSet's ReplicaSets, what the million
// scenario syncs by default (see replicasets.go for why).
var replicaSetKind = &millionKind{
	name: "replicasets",
	res: kube.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"},
		Kind: "ReplicaSet", Namespaced: true},
	serverBytes: 0,
	startFull:   startFull[*appsv1.ReplicaSet],
	startView:   startViewOf[*ReplicaSetView],
	warmView:    warmViewOf[*ReplicaSetView],
	clientGo: func(f informers.SharedInformerFactory) cgcache.SharedIndexInformer {
		return f.Apps().V1().ReplicaSets().Informer()
	},
	create: createReplicaSets,
	get: func(ctx context.Context, cs kubernetes.Interface, i int) (testenv.StoredObject, error) {
		want := sidecarReplicaSet(i)
		return cs.AppsV1().ReplicaSets(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
	},
	stored: func(t testenv.StoredObject, i int) testenv.StoredObject {
		return storedSidecarReplicaSet(t.(*appsv1.ReplicaSet), i)
	},
	describe: "a ReplicaSet (a Deployment's, with a pod template of two containers, managedFields of two operations, three replicas available)",
}

// millionKinds are the kinds by name.
var millionKinds = []*millionKind{replicaSetKind, podKind}

// kindNamed returns the kind called name.
func kindNamed(name string) (*millionKind, error) {
	for _, k := range millionKinds {
		if k.name == name {
			return k, nil
		}
	}
	return nil, fmt.Errorf("unknown kind %q: want one of %s", name, millionKindNames())
}

// childKind is the kind of ChildKindEnv.
func childKind() (*millionKind, error) {
	name := os.Getenv(ChildKindEnv)
	if name == "" {
		return podKind, nil
	}
	return kindNamed(name)
}

// path is the API path of the kind's collection across namespaces.
func (k *millionKind) path() []string {
	if k.res.GVR.Group == "" {
		return []string{"api", k.res.GVR.Version, k.res.GVR.Resource}
	}
	return []string{"apis", k.res.GVR.Group, k.res.GVR.Version, k.res.GVR.Resource}
}

// count returns how many objects of the kind the cluster holds.
func (k *millionKind) count(ctx context.Context, cs kubernetes.Interface) (int, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath(k.path()...).Param("limit", "1").
		SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", k.name, err)
	}
	var list struct {
		Metadata metav1.ListMeta   `json:"metadata"`
		Items    []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return 0, fmt.Errorf("count %s: %w", k.name, err)
	}
	have := len(list.Items)
	if list.Metadata.RemainingItemCount != nil {
		have += int(*list.Metadata.RemainingItemCount)
	}
	return have, nil
}

// sizes returns the size of object 0 as the server holds it: JSON with
// managedFields and without, and protobuf as etcd stores it.
func (k *millionKind) sizes(ctx context.Context, cs kubernetes.Interface) (full, noMF, stored int, err error) {
	obj, err := k.get(ctx, cs, 0)
	if err != nil {
		return 0, 0, 0, err
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return 0, 0, 0, err
	}
	obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	b, err := json.Marshal(obj)
	if err != nil {
		return 0, 0, 0, err
	}
	full = len(b)
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		return 0, 0, 0, errors.New("no protobuf serializer")
	}
	obj.SetResourceVersion("") // etcd's revision, not stored
	pb, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, gvks[0].GroupVersion()), obj)
	if err != nil {
		return 0, 0, 0, err
	}
	obj.SetManagedFields(nil)
	b, err = json.Marshal(obj)
	return full, len(b), len(pb), err
}

// startFull starts kinformer's informer of full objects T, with the
// namespace index client-go's factory informers have.
func startFull[T cache.Object](ctx context.Context, cfg *rest.Config, dropMF bool, added func()) (memInformer, error) {
	f, err := kube.NewFactory(cfg, kube.FactoryOptions{})
	if err != nil {
		return memInformer{}, err
	}
	opts := kube.InformerOptions[T]{
		Indexers: cache.Indexers[T]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[T]},
	}
	if dropMF {
		opts.Transform = informer.DropManagedFields[T]
	}
	inf, _, err := kube.Informer(ctx, f, opts)
	if err != nil {
		f.Shutdown()
		return memInformer{}, err
	}
	return startOurs(ctx, f, inf, added)
}

// startViewOf starts kinformer's informer of the view V, with the
// namespace index (startFull of V: a view has no managedFields to drop).
func startViewOf[V cache.Object](ctx context.Context, cfg *rest.Config, added func()) (memInformer, error) {
	return startFull[V](ctx, cfg, false, added)
}

// warmViewOf adds the view V's informer, with a checkpoint, to f.
func warmViewOf[V cache.Object](ctx context.Context, f *kube.Factory) (func(context.Context) bool, func() []string, error) {
	inf, _, err := kube.Informer(ctx, f, kube.InformerOptions[V]{
		Indexers:   cache.Indexers[V]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[V]},
		Checkpoint: true,
	})
	if err != nil {
		return nil, nil, err
	}
	return inf.WaitForCacheSync, func() []string { return cacheKeys(inf) }, nil
}

// millionKindNames lists the kinds' names, sorted.
func millionKindNames() string {
	var names []string
	for _, k := range millionKinds {
		names = append(names, k.name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

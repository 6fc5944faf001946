package controllerruntime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kinformer/kinformer/kube"
)

// testPodView is the view of a pod the tests read: its node, phase and
// containers' names.
type testPodView struct {
	View[*corev1.Pod]
	NodeName   string                 `kube:"spec.nodeName"`
	Phase      corev1.PodPhase        `kube:"status.phase"`
	Containers []testContainerView    `kube:"spec.containers"`
	Limits     map[string]string      `kube:"-"`
	Owner      *metav1.OwnerReference `kube:"-"`
}

type testContainerView struct {
	Name string `kube:"name"`
}

func (v *testPodView) DeepCopyObject() runtime.Object { return DeepCopy(v) }

// viewScheme is client-go's scheme with testPodView added.
func viewScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := AddView[*testPodView](s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAddView(t *testing.T) {
	s := viewScheme(t)
	gvks, _, err := s.ObjectKinds(&testPodView{})
	if err != nil || len(gvks) != 1 || gvks[0] != (schema.GroupVersionKind{Version: "v1", Kind: "testPodView"}) {
		t.Fatalf("view kind = %v, %v; want v1/testPodView", gvks, err)
	}
	if _, _, err := s.ObjectKinds(&ViewList[*testPodView]{}); err != nil {
		t.Fatalf("view list not in the scheme: %v", err)
	}
	if err := AddView[*testPodView](s); err != nil {
		t.Fatalf("adding the view again: %v", err)
	}
	if err := AddView[*typoView](s); !errors.Is(err, kube.ErrInvalidView) {
		t.Fatalf("a view with a wrong path: err = %v, want kube.ErrInvalidView", err)
	}
	if err := AddView[*corev1.Pod](s); err == nil {
		t.Fatal("AddView of a type that is not a view succeeded")
	}
}

type typoView struct {
	View[*corev1.Pod]
	Node string `kube:"spec.node"`
}

func (v *typoView) DeepCopyObject() runtime.Object { return DeepCopy(v) }

func TestDeepCopyView(t *testing.T) {
	v := &testPodView{NodeName: "n1", Containers: []testContainerView{{Name: "a"}},
		Limits: map[string]string{"cpu": "1"}, Owner: &metav1.OwnerReference{Name: "rs"}}
	v.Name, v.Labels = "p", kube.LabelsOf(map[string]string{"app": "web"})
	v.DeletionTimestamp = &metav1.Time{}
	v.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "testPodView"})
	c := v.DeepCopyObject().(*testPodView)
	if fmt.Sprint(*c) != fmt.Sprint(*v) {
		t.Fatalf("copy differs:\n%+v\n%+v", *c, *v)
	}
	c.Containers[0].Name, c.Limits["cpu"], c.Owner.Name = "b", "2", "other"
	c.SetLabels(map[string]string{"app": "db"})
	if v.Containers[0].Name != "a" || v.Limits["cpu"] != "1" || v.Owner.Name != "rs" || v.Labels.Get("app") != "web" {
		t.Fatalf("the copy shares memory with the original: %+v", *v)
	}
	if c.DeletionTimestamp == v.DeletionTimestamp {
		t.Fatal("the copy shares the deletion timestamp")
	}
	if c.GetObjectKind().GroupVersionKind().Kind != "testPodView" {
		t.Fatal("the copy lost its kind")
	}
}

// startManager runs mgr until the returned function is called.
func startManager(t *testing.T, mgr manager.Manager) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return func() { cancel(); wg.Wait() }
}

func newTestManager(t *testing.T, s *runtime.Scheme, opts manager.Options) manager.Manager {
	t.Helper()
	opts.Scheme = s
	if opts.NewCache == nil {
		opts.NewCache = New
	}
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	mgr, err := manager.New(env.RESTConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

func createPod(t *testing.T, ns, name, node string, labels map[string]string) *corev1.Pod {
	t.Helper()
	p, err := clientset().CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{
			{Name: "main", Image: "busybox"}, {Name: "sidecar", Image: "busybox"},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A controller written with controller-runtime's builder over a view type:
// For watches the views, the manager's client reads them with Get and List,
// and the cache holds views only, no pod.
func TestViewThroughManager(t *testing.T) {
	ns := newNamespace(t)
	for i := range 5 {
		createPod(t, ns, fmt.Sprintf("p%d", i), fmt.Sprintf("node-%d", i%2), map[string]string{"app": "web"})
	}
	mgr := newTestManager(t, viewScheme(t), manager.Options{})
	var mu sync.Mutex
	seen := map[string]string{}
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if req.Namespace != ns {
			return reconcile.Result{}, nil
		}
		var v testPodView
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, &v); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		mu.Lock()
		seen[req.Name] = fmt.Sprintf("%s %s %d %s", v.NodeName, v.Labels.Get("app"), len(v.Containers), v.GetObjectKind().GroupVersionKind().Kind)
		mu.Unlock()
		return reconcile.Result{}, nil
	})
	// A field index on a view.
	if err := mgr.GetFieldIndexer().IndexField(t.Context(), &testPodView{}, "spec.nodeName", func(o client.Object) []string {
		return []string{o.(*testPodView).NodeName}
	}); err != nil {
		t.Fatal(err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("podview").For(&testPodView{}).Complete(r); err != nil {
		t.Fatal(err)
	}
	stop := startManager(t, mgr)
	defer stop()
	summary := func(name string) string {
		mu.Lock()
		defer mu.Unlock()
		return seen[name]
	}
	eventually(t, "every pod reconciled from its view", func() bool {
		for i := range 5 {
			if summary(fmt.Sprintf("p%d", i)) != fmt.Sprintf("node-%d web 2 testPodView", i%2) {
				return false
			}
		}
		return true
	})

	// A change to a pod is watched through its view.
	p, err := clientset().CoreV1().Pods(ns).Get(t.Context(), "p0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Labels["app"] = "db"
	if _, err := clientset().CoreV1().Pods(ns).Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the changed pod reconciled again", func() bool { return summary("p0") == "node-0 db 2 testPodView" })

	// List into a ViewList, with a label selector.
	var list ViewList[*testPodView]
	if err := mgr.GetClient().List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 4 {
		t.Fatalf("List of views with app=web: %d items, want 4", len(list.Items))
	}
	for _, v := range list.Items {
		if v.Labels.Get("app") != "web" || v.Namespace != ns || len(v.Containers) != 2 {
			t.Fatalf("listed view %+v", v)
		}
	}
	// Reads are deep copies: changing one changes nothing cached.
	list.Items[0].Containers[0].Name = "changed"
	var again testPodView
	if err := mgr.GetClient().Get(t.Context(), types.NamespacedName{Namespace: ns, Name: list.Items[0].Name}, &again); err != nil {
		t.Fatal(err)
	}
	if again.Containers[0].Name != "main" {
		t.Fatalf("a read's change reached the cache: %q", again.Containers[0].Name)
	}
	// Through the field index on a view.
	if err := mgr.GetClient().List(t.Context(), &list, client.InNamespace(ns), client.MatchingFields{"spec.nodeName": "node-1"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("views on node-1: %d, want 2", len(list.Items))
	}

	// Only views are cached: the cache has no informer of pods.
	c := mgr.GetCache().(*informerCache)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) != 1 {
		t.Errorf("the cache has %d informers, want 1 (of views)", len(c.entries))
	}
	for key := range c.entries {
		if key.gvk.Kind != "testPodView" {
			t.Errorf("the cache holds %v", key.gvk)
		}
	}
}

// TestLabelsOfReadsAViewsOwnLabels: List's selectors match a view
// against the kube.Labels it holds (no map made per object), and any
// other object against its map.
func TestLabelsOfReadsAViewsOwnLabels(t *testing.T) {
	v := &testPodView{}
	v.SetLabels(map[string]string{"app": "web"})
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	if l, held := labelsOf(v).(kube.Labels); !held || !sel.Matches(l) {
		t.Errorf("a view's labels for a selector: %T %v", labelsOf(v), labelsOf(v))
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}}}
	if l := labelsOf(pod); l.Get("app") != "db" || sel.Matches(l) {
		t.Errorf("a pod's labels for a selector: %v", l)
	}
}

package controllerruntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kinformer/kinformer/informer"
)

// The tests in this file cover the differences controller-runtime's own
// pkg/cache suite (upstream/cache) found between the two caches, each run
// on both: those fixed (leader election, apiVersion/kind, NewInformer) and
// the one kept on purpose (handler panics; see the package doc).

// TestConformanceNeedLeaderElection: a cache added to a manager with mgr.Add
// starts on every replica, leader or not. controller-runtime's cache says so
// only in its default shape (its caches per namespace and per kind do not
// implement NeedLeaderElection, so the manager would run them on the leader
// only); kinformer's says so in every shape (one cache, one per namespace,
// one per kind), the default's answer.
func TestConformanceNeedLeaderElection(t *testing.T) {
	shapes := map[string]crcache.Options{
		"default":           {},
		"DefaultNamespaces": {DefaultNamespaces: map[string]crcache.Config{"default": {}}},
		"ByObject":          {ByObject: map[client.Object]crcache.ByObject{&corev1.ConfigMap{}: {Label: labels.Everything()}}},
	}
	for _, im := range impls {
		for name, opts := range shapes {
			if im.name == "controller-runtime" && name != "default" {
				continue // see above
			}
			t.Run(im.name+"/"+name, func(t *testing.T) {
				c, err := im.new(env.RESTConfig(), opts)
				if err != nil {
					t.Fatal(err)
				}
				r, ok := c.(manager.LeaderElectionRunnable)
				if !ok {
					t.Fatalf("%T does not say whether it needs leader election", c)
				}
				if r.NeedLeaderElection() {
					t.Error("the cache would start only on the elected leader")
				}
			})
		}
	}
}

// typeMetaLog records the apiVersion/kind of every object a handler is told
// of, by name.
type typeMetaLog struct {
	mu   sync.Mutex
	gvks map[string]schema.GroupVersionKind
}

func (l *typeMetaLog) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		obj := o.(client.Object)
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.gvks == nil {
			l.gvks = map[string]schema.GroupVersionKind{}
		}
		l.gvks[obj.GetName()] = obj.GetObjectKind().GroupVersionKind()
	}}
}

func (l *typeMetaLog) get(name string) (schema.GroupVersionKind, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	gvk, ok := l.gvks[name]
	return gvk, ok
}

// TestConformanceTypeMeta: controller-runtime caches Go-typed objects
// without apiVersion and kind (its decoder clears them), built-in kinds and
// others alike, so handlers and reads without a deep copy see them empty;
// deep-copied reads set them on the copy. Unstructured and metadata-only
// objects always carry them.
func TestConformanceTypeMeta(t *testing.T) {
	capGVK := storagev1.SchemeGroupVersion.WithKind("CSIStorageCapacity")
	setup := func(t *testing.T, ns string) {
		threeConfigMaps(t, ns)
		_, err := clientset().StorageV1().CSIStorageCapacities(ns).Create(t.Context(), &storagev1.CSIStorageCapacity{
			ObjectMeta: metav1.ObjectMeta{Name: "cap"}, StorageClassName: "fast",
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	conform(t, setup, nil, func(t *testing.T, c crcache.Cache, ns string) {
		ctx := t.Context()
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(cmGVK)
		p := &metav1.PartialObjectMetadata{}
		p.SetGroupVersionKind(cmGVK)
		for _, tc := range []struct {
			what string
			obj  client.Object
			name string
			want schema.GroupVersionKind // of handler objects and reads without a copy
		}{
			{"typed built-in", &corev1.ConfigMap{}, "a", schema.GroupVersionKind{}},
			{"typed, no typed source", &storagev1.CSIStorageCapacity{}, "cap", schema.GroupVersionKind{}},
			{"unstructured", u, "a", cmGVK},
			{"metadata", p, "a", cmGVK},
		} {
			inf, err := c.GetInformer(ctx, tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			log := &typeMetaLog{}
			reg, err := inf.AddEventHandler(log.handler())
			if err != nil {
				t.Fatal(err)
			}
			if !toolscache.WaitFor(ctx, "", reg.HasSyncedChecker()) {
				t.Fatal("registration never synced")
			}
			if gvk, ok := log.get(tc.name); !ok || gvk != tc.want {
				t.Errorf("%s: handler got apiVersion/kind %v (told: %v), want %v", tc.what, gvk, ok, tc.want)
			}
			key := client.ObjectKey{Namespace: ns, Name: tc.name}
			shared := tc.obj.DeepCopyObject().(client.Object)
			if err := c.Get(ctx, key, shared, &client.GetOptions{UnsafeDisableDeepCopy: ptrTo(true)}); err != nil {
				t.Fatal(err)
			}
			if gvk := shared.GetObjectKind().GroupVersionKind(); gvk != tc.want {
				t.Errorf("%s: Get without a copy: apiVersion/kind %v, want %v", tc.what, gvk, tc.want)
			}
			copied := tc.obj.DeepCopyObject().(client.Object)
			if err := c.Get(ctx, key, copied); err != nil {
				t.Fatal(err)
			}
			want := cmGVK
			if tc.name == "cap" {
				want = capGVK
			}
			if gvk := copied.GetObjectKind().GroupVersionKind(); gvk != want {
				t.Errorf("%s: Get: apiVersion/kind %v, want %v", tc.what, gvk, want)
			}
			if err := inf.RemoveEventHandler(reg); err != nil {
				t.Fatal(err)
			}
		}
		var l corev1.ConfigMapList
		if err := c.List(ctx, &l, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			t.Fatal(err)
		}
		for _, item := range l.Items {
			if gvk := item.GroupVersionKind(); !gvk.Empty() {
				t.Errorf("List without a copy: item %s has apiVersion/kind %v", item.Name, gvk)
			}
		}
	})
}

// TestConformanceNewInformer: Options.NewInformer makes every informer of
// the cache, from the ListerWatcher, object, resync period and indexers the
// cache hands it; the cache reads and watches through it.
func TestConformanceNewInformer(t *testing.T) {
	var mu sync.Mutex
	var made []string
	opts := func(string) crcache.Options {
		return crcache.Options{NewInformer: func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
			mu.Lock()
			made = append(made, fmt.Sprintf("%T", obj))
			mu.Unlock()
			return toolscache.NewSharedIndexInformer(lw, obj, resync, idx)
		}}
	}
	conform(t, threeConfigMaps, opts, func(t *testing.T, c crcache.Cache, ns string) {
		ctx := t.Context()
		mu.Lock()
		made = nil
		mu.Unlock()
		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		p := &metav1.PartialObjectMetadataList{}
		p.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		for _, list := range []client.ObjectList{&corev1.ConfigMapList{}, u, p} {
			if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
				t.Fatal(err)
			}
			if n := meta.LenList(list); n != 2 {
				t.Errorf("%T: %d items, want a and b", list, n)
			}
		}
		mu.Lock()
		got := slices.Clone(made)
		mu.Unlock()
		if want := []string{"*v1.ConfigMap", "*unstructured.Unstructured", "*v1.PartialObjectMetadata"}; !slices.Equal(got, want) {
			t.Errorf("NewInformer made informers of %v, want %v", got, want)
		}
		inf, err := c.GetInformer(ctx, &corev1.ConfigMap{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := inf.(toolscache.SharedIndexInformer); !ok {
			t.Errorf("GetInformer returned %T, not NewInformer's informer", inf)
		}
		log := &handlerLog{}
		if _, err := inf.AddEventHandler(log.handler()); err != nil {
			t.Fatal(err)
		}
		createConfigMap(t, ns, "d", nil, nil)
		eventually(t, "add d", func() bool { return log.has("add " + ns + "/d") })
		var cm corev1.ConfigMap
		eventually(t, "Get d", func() bool { return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "d"}, &cm) == nil })
	})
}

// childEnv, set, makes this test binary a child process of
// TestConformanceHandlerPanic: it runs the test named by -test.run on the
// parent's control plane (the kubeconfig in childKubeconfigEnv) instead of
// starting one.
const (
	childEnv           = "KINFORMER_CR_CHILD"
	childKubeconfigEnv = "KINFORMER_CR_CHILD_KUBECONFIG"
	childNamespaceEnv  = "KINFORMER_CR_CHILD_NAMESPACE"
	childCrashEnv      = "KINFORMER_CR_CHILD_CRASH_ON_PANIC"
)

// TestConformanceHandlerPanic: a handler panics on one object, then a second
// object is created. controller-runtime's cache (client-go's informer) logs
// "Observed a panic" and crashes the process; kinformer's reports the panic
// to utilruntime.HandleError and tells the handler of the second object;
// with the error handler the package doc gives, kinformer's crashes too.
func TestConformanceHandlerPanic(t *testing.T) {
	for _, tc := range []struct {
		side, crash string
		wantExit    bool
		wantOut     []string
	}{
		{"controller-runtime", "", true, []string{"Observed a panic", "handler panics on boom"}},
		{"kinformer", "", false, []string{"panicked: handler panics on boom", "told of after"}},
		{"kinformer", "1", true, []string{"panicked: handler panics on boom"}},
	} {
		t.Run(tc.side+map[string]string{"": "", "1": "/crash-on-panic"}[tc.crash], func(t *testing.T) {
			ns := newNamespace(t)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // a bound against hangs
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHandlerPanicChild$", "-test.v")
			cmd.Env = append(os.Environ(), childEnv+"="+tc.side, childKubeconfigEnv+"="+env.KubeconfigPath(),
				childNamespaceEnv+"="+ns, childCrashEnv+"="+tc.crash)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if ctx.Err() != nil {
				t.Fatalf("the child did not finish:\n%s", out)
			}
			if crashed := errors.As(err, &exit); crashed != tc.wantExit {
				t.Errorf("child crashed: %v (%v), want %v; its output:\n%s", crashed, err, tc.wantExit, out)
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(string(out), want) {
					t.Errorf("the child's output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestHandlerPanicChild is TestConformanceHandlerPanic's child; it does
// nothing in a plain run.
func TestHandlerPanicChild(t *testing.T) {
	side := os.Getenv(childEnv)
	if side == "" {
		t.Skip("run by TestConformanceHandlerPanic")
	}
	// reported is closed once the handler's panic has been through every
	// error handler before this one (klog's among them, which prints it):
	// the child waits for it, so that it never exits before the report
	// is printed (a handler's panic is reported on another goroutine).
	reported := make(chan struct{})
	var reportOnce sync.Once
	crash := os.Getenv(childCrashEnv) != ""
	defer func(saved []utilruntime.ErrorHandler) { utilruntime.ErrorHandlers = saved }(utilruntime.ErrorHandlers)
	utilruntime.ErrorHandlers = append(utilruntime.ErrorHandlers,
		func(_ context.Context, err error, _ string, _ ...any) {
			var p *informer.HandlerPanicError
			if !errors.As(err, &p) {
				return
			}
			if crash {
				panic(p)
			}
			reportOnce.Do(func() { close(reported) })
		})
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(childKubeconfigEnv))
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer utilnet.CloseIdleConnectionsFor(hc.Transport) // after stop: goleak checks the child too
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	var c crcache.Cache
	for _, im := range impls {
		if im.name == side {
			c, err = im.new(cfg, crcache.Options{HTTPClient: hc})
		}
	}
	if c == nil || err != nil {
		t.Fatalf("cache %q: %v", side, err)
	}
	stop := start(t, c)
	defer stop()
	inf, err := c.GetInformer(t.Context(), &corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	told := make(chan struct{})
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		switch o.(client.Object).GetName() {
		case "boom":
			panic("handler panics on boom")
		case "after":
			close(told)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ns := os.Getenv(childNamespaceEnv)
	for _, name := range []string{"boom", "after"} {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-told:
		fmt.Println("told of after")
	case <-time.After(time.Minute): // a bound against hangs, the parent reports it
		t.Fatal("never told of after")
	}
	if side == "kinformer" {
		select {
		case <-reported:
		case <-time.After(time.Minute):
			t.Fatal("the handler's panic was never reported")
		}
	}
}

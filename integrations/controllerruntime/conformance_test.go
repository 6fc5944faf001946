package controllerruntime

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The tests in this file are controller-runtime's cache contract, as its
// documentation and behaviour state it, each run against controller-runtime's
// own cache and kinformer's (conform) on the same objects of a real
// kube-apiserver. They assert controller-runtime's behaviour: a subtest that
// fails for one cache only is a difference between the two.

var cmGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

func threeConfigMaps(t *testing.T, ns string) {
	createConfigMap(t, ns, "a", map[string]string{"app": "web"}, map[string]string{"owner": "x"})
	createConfigMap(t, ns, "b", map[string]string{"app": "web"}, map[string]string{"owner": "y"})
	createConfigMap(t, ns, "c", map[string]string{"app": "db"}, map[string]string{"owner": "x"})
}

func names(objs []client.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	slices.Sort(out)
	return out
}

func cmNames(l *corev1.ConfigMapList) []string {
	var objs []client.Object
	for i := range l.Items {
		objs = append(objs, &l.Items[i])
	}
	return names(objs)
}

func TestConformanceGetTyped(t *testing.T) {
	conform(t, threeConfigMaps, nil, func(t *testing.T, c crcache.Cache, ns string) {
		var cm corev1.ConfigMap
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a"}, &cm); err != nil {
			t.Fatal(err)
		}
		if cm.Name != "a" || cm.Data["owner"] != "x" || cm.Labels["app"] != "web" {
			t.Errorf("got %s labels %v data %v", cm.Name, cm.Labels, cm.Data)
		}
		if got := cm.GroupVersionKind(); got != cmGVK {
			t.Errorf("GVK %v, want %v", got, cmGVK)
		}
		err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "missing"}, &cm)
		if !apierrors.IsNotFound(err) {
			t.Fatalf("missing object: %v, want NotFound", err)
		}
		want := apierrors.NewNotFound(schema.GroupResource{Resource: "ConfigMap"}, "missing").Error()
		if err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	})
}

func TestConformanceGetDeepCopies(t *testing.T) {
	conform(t, threeConfigMaps, nil, func(t *testing.T, c crcache.Cache, ns string) {
		key := client.ObjectKey{Namespace: ns, Name: "a"}
		var first, second, shared1, shared2 corev1.ConfigMap
		if err := c.Get(t.Context(), key, &first); err != nil {
			t.Fatal(err)
		}
		first.Labels["app"] = "mutated"
		if err := c.Get(t.Context(), key, &second); err != nil {
			t.Fatal(err)
		}
		if second.Labels["app"] != "web" {
			t.Errorf("mutating a read object changed the cache: %v", second.Labels)
		}
		// Without the copy, two reads share the cached object's maps.
		for _, cm := range []*corev1.ConfigMap{&shared1, &shared2} {
			if err := c.Get(t.Context(), key, cm, &client.GetOptions{UnsafeDisableDeepCopy: ptrTo(true)}); err != nil {
				t.Fatal(err)
			}
		}
		if reflect.ValueOf(shared1.Labels).UnsafePointer() != reflect.ValueOf(shared2.Labels).UnsafePointer() {
			t.Error("UnsafeDisableDeepCopy reads do not share the cached object")
		}
	})
}

func ptrTo[T any](v T) *T { return &v }

func TestConformanceList(t *testing.T) {
	conform(t, threeConfigMaps, nil, func(t *testing.T, c crcache.Cache, ns string) {
		ctx := t.Context()
		var all corev1.ConfigMapList
		if err := c.List(ctx, &all, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if got := cmNames(&all); !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Errorf("namespace list %v", got)
		}
		if all.Continue != "continue-not-supported" {
			t.Errorf("Continue %q", all.Continue)
		}
		var web corev1.ConfigMapList
		if err := c.List(ctx, &web, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
			t.Fatal(err)
		}
		if got := cmNames(&web); !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("label list %v", got)
		}
		var limited corev1.ConfigMapList
		if err := c.List(ctx, &limited, client.InNamespace(ns), client.Limit(2)); err != nil {
			t.Fatal(err)
		}
		if len(limited.Items) != 2 {
			t.Errorf("Limit 2 gave %d items", len(limited.Items))
		}
		for _, item := range limited.Items {
			if item.GroupVersionKind() != cmGVK {
				t.Errorf("listed item's GVK %v", item.GroupVersionKind())
			}
		}
		if err := c.List(ctx, &limited, client.InNamespace(ns), client.Continue("x")); err == nil {
			t.Error("Continue accepted")
		}
		var everywhere corev1.ConfigMapList
		if err := c.List(ctx, &everywhere); err != nil {
			t.Fatal(err)
		}
		if len(everywhere.Items) < 3 {
			t.Errorf("list of every namespace: %d items", len(everywhere.Items))
		}
		var none corev1.ConfigMapList
		err := c.List(ctx, &none, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: fields.ParseSelectorOrDie("metadata.name!=a")})
		if err == nil {
			t.Error("non-exact field selector accepted")
		}
	})
}

func TestConformanceMatchingFieldsOnIndexes(t *testing.T) {
	other := ""
	setup := func(t *testing.T, ns string) {
		threeConfigMaps(t, ns)
		other = newNamespace(t)
		createConfigMap(t, other, "d", nil, map[string]string{"owner": "x"})
	}
	conform(t, setup, nil, func(t *testing.T, c crcache.Cache, ns string) {
		ctx := t.Context()
		err := c.IndexField(ctx, &corev1.ConfigMap{}, "data.owner", func(o client.Object) []string {
			return []string{o.(*corev1.ConfigMap).Data["owner"]}
		})
		if err != nil {
			t.Fatal(err)
		}
		err = c.IndexField(ctx, &corev1.ConfigMap{}, "app", func(o client.Object) []string {
			return []string{o.GetLabels()["app"]}
		})
		if err != nil {
			t.Fatal(err)
		}
		list := func(opts ...client.ListOption) []string {
			var l corev1.ConfigMapList
			if err := c.List(ctx, &l, opts...); err != nil {
				t.Fatal(err)
			}
			return cmNames(&l)
		}
		if got := list(client.InNamespace(ns), client.MatchingFields{"data.owner": "x"}); !slices.Equal(got, []string{"a", "c"}) {
			t.Errorf("owner=x in %s: %v", ns, got)
		}
		var everywhere corev1.ConfigMapList
		if err := c.List(ctx, &everywhere, client.MatchingFields{"data.owner": "x"}); err != nil {
			t.Fatal(err)
		}
		var ours []string // other tests' objects are in the cache too
		for _, cm := range everywhere.Items {
			if cm.Namespace == ns || cm.Namespace == other {
				ours = append(ours, cm.Name)
			}
			if cm.Data["owner"] != "x" {
				t.Errorf("owner=x everywhere listed %s/%s", cm.Namespace, cm.Name)
			}
		}
		if slices.Sort(ours); !slices.Equal(ours, []string{"a", "c", "d"}) {
			t.Errorf("owner=x everywhere: %v", ours)
		}
		if got := list(client.InNamespace(ns), client.MatchingFields{"data.owner": "x", "app": "db"}); !slices.Equal(got, []string{"c"}) {
			t.Errorf("owner=x,app=db: %v", got)
		}
		var l corev1.ConfigMapList
		if err := c.List(ctx, &l, client.MatchingFields{"nope": "x"}); err == nil {
			t.Error("List on a missing index succeeded")
		}
	})
}

func TestConformanceUnstructuredAndMetadata(t *testing.T) {
	conform(t, threeConfigMaps, nil, func(t *testing.T, c crcache.Cache, ns string) {
		ctx := t.Context()
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(cmGVK)
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b"}, u); err != nil {
			t.Fatal(err)
		}
		if owner, _, _ := unstructured.NestedString(u.Object, "data", "owner"); owner != "y" || u.GroupVersionKind() != cmGVK {
			t.Errorf("unstructured b: owner %q gvk %v", owner, u.GroupVersionKind())
		}
		ul := &unstructured.UnstructuredList{}
		ul.SetGroupVersionKind(cmGVK.GroupVersion().WithKind("ConfigMapList"))
		if err := c.List(ctx, ul, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
			t.Fatal(err)
		}
		if len(ul.Items) != 2 {
			t.Errorf("unstructured list: %d items", len(ul.Items))
		}

		p := &metav1.PartialObjectMetadata{}
		p.SetGroupVersionKind(cmGVK)
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c"}, p); err != nil {
			t.Fatal(err)
		}
		if p.Labels["app"] != "db" || p.GroupVersionKind() != cmGVK {
			t.Errorf("metadata c: labels %v gvk %v", p.Labels, p.GroupVersionKind())
		}
		pl := &metav1.PartialObjectMetadataList{}
		pl.SetGroupVersionKind(cmGVK.GroupVersion().WithKind("ConfigMapList"))
		if err := c.List(ctx, pl, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(pl.Items) != 3 {
			t.Errorf("metadata list: %d items", len(pl.Items))
		}
		for _, item := range pl.Items {
			if item.GroupVersionKind() != cmGVK {
				t.Errorf("metadata item GVK %v", item.GroupVersionKind())
			}
		}
	})
}

func TestConformanceErrors(t *testing.T) {
	ns := newNamespace(t)
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			ctx := t.Context()
			c, err := im.new(env.RESTConfig(), crcache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var cm corev1.ConfigMap
			var notStarted *crcache.ErrCacheNotStarted
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a"}, &cm); !errors.As(err, &notStarted) {
				t.Errorf("Get before Start: %v", err)
			}
			var l corev1.ConfigMapList
			if err := c.List(ctx, &l); !errors.As(err, &notStarted) {
				t.Errorf("List before Start: %v", err)
			}
			if _, err := c.GetInformerForKind(ctx, schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Nothing"}); !runtime.IsNotRegisteredError(err) {
				t.Errorf("GetInformerForKind of a kind outside the scheme: %v", err)
			}
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Nothing"})
			if _, err := c.GetInformer(ctx, u); !meta.IsNoMatchError(err) {
				t.Errorf("GetInformer of a kind the server does not serve: %v", err)
			}
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if c.WaitForCacheSync(cancelled) {
				t.Error("WaitForCacheSync before Start reported synced")
			}

			strict, err := im.new(env.RESTConfig(), crcache.Options{ReaderFailOnMissingInformer: true})
			if err != nil {
				t.Fatal(err)
			}
			var notCached *crcache.ErrResourceNotCached
			if err := strict.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a"}, &cm); !errors.As(err, &notCached) || notCached.GVK != cmGVK {
				t.Errorf("Get of an uncached kind: %v", err)
			}
		})
	}
}

// handlerLog records what a client-go handler is told, as "add NS/NAME",
// "update NS/NAME", "resync NS/NAME", "delete NS/NAME".
type handlerLog struct {
	mu     sync.Mutex
	events []string
}

func (h *handlerLog) add(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, s)
}

func (h *handlerLog) has(s string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Contains(h.events, s)
}

func (h *handlerLog) count(s string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, e := range h.events {
		if e == s {
			n++
		}
	}
	return n
}

func (h *handlerLog) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { h.add("add " + key(o)) },
		UpdateFunc: func(old, o any) {
			if old.(client.Object).GetResourceVersion() == o.(client.Object).GetResourceVersion() {
				h.add("resync " + key(o))
				return
			}
			h.add("update " + key(o))
		},
		DeleteFunc: func(o any) {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			h.add("delete " + key(o))
		},
	}
}

func key(o any) string {
	obj := o.(client.Object)
	return obj.GetNamespace() + "/" + obj.GetName()
}

func TestConformanceInformerHandlers(t *testing.T) {
	conform(t, threeConfigMaps, nil, func(t *testing.T, c crcache.Cache, ns string) {
		ctx := t.Context()
		inf, err := c.GetInformer(ctx, &corev1.ConfigMap{})
		if err != nil {
			t.Fatal(err)
		}
		if !inf.HasSynced() {
			t.Error("GetInformer after Start returned before the informer synced")
		}
		log := &handlerLog{}
		reg, err := inf.AddEventHandler(log.handler())
		if err != nil {
			t.Fatal(err)
		}
		if !toolscache.WaitFor(ctx, "", reg.HasSyncedChecker()) {
			t.Fatal("registration never synced")
		}
		for _, n := range []string{"a", "b", "c"} {
			if !log.has("add " + ns + "/" + n) {
				t.Errorf("no initial add of %s", n)
			}
		}
		createConfigMap(t, ns, "d", nil, nil)
		eventually(t, "add d", func() bool { return log.has("add " + ns + "/d") })
		if err := clientset().CoreV1().ConfigMaps(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "delete a", func() bool { return log.has("delete " + ns + "/a") })
		if err := inf.RemoveEventHandler(reg); err != nil {
			t.Fatal(err)
		}
		createConfigMap(t, ns, "e", nil, nil)
		eventually(t, "the cache has e", func() bool {
			var cm corev1.ConfigMap
			return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "e"}, &cm) == nil
		})
		if log.has("add " + ns + "/e") {
			t.Errorf("removed handler told of e: %v", log.events)
		}
		if err := c.RemoveInformer(ctx, &corev1.ConfigMap{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "informer stopped", inf.IsStopped)
	})
}

func TestConformanceDefaultNamespacesAndByObject(t *testing.T) {
	other := ""
	setup := func(t *testing.T, ns string) {
		threeConfigMaps(t, ns)
		other = newNamespace(t)
		createConfigMap(t, other, "d", map[string]string{"app": "web"}, nil)
	}
	opts := func(ns string) crcache.Options {
		return crcache.Options{
			DefaultNamespaces: map[string]crcache.Config{ns: {}},
			ByObject: map[client.Object]crcache.ByObject{
				&corev1.Secret{}: {Label: labels.SelectorFromSet(labels.Set{"app": "web"})},
			},
			DefaultTransform: func(o any) (any, error) {
				obj := o.(client.Object)
				obj.SetAnnotations(map[string]string{"seen": "yes"})
				return obj, nil
			},
		}
	}
	conform(t, setup, opts, func(t *testing.T, c crcache.Cache, ns string) {
		ctx := t.Context()
		var l corev1.ConfigMapList
		if err := c.List(ctx, &l); err != nil {
			t.Fatal(err)
		}
		if got := cmNames(&l); !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Errorf("list of a one-namespace cache: %v", got)
		}
		for _, cm := range l.Items {
			if cm.Annotations["seen"] != "yes" {
				t.Errorf("%s not transformed: %v", cm.Name, cm.Annotations)
			}
		}
		var cm corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: other, Name: "d"}, &cm); err == nil {
			t.Error("Get in a namespace the cache does not watch succeeded")
		}
		inf, err := c.GetInformer(ctx, &corev1.ConfigMap{})
		if err != nil {
			t.Fatal(err)
		}
		log := &handlerLog{}
		reg, err := inf.AddEventHandler(log.handler())
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "handler synced", reg.HasSynced)
		if log.has("add "+other+"/d") || !log.has("add "+ns+"/a") {
			t.Errorf("handler of a one-namespace informer: %v", log.events)
		}
	})
}

func TestConformanceSyncPeriodResyncs(t *testing.T) {
	opts := func(string) crcache.Options {
		return crcache.Options{
			SyncPeriod: ptrTo(time.Second),
			ByObject: map[client.Object]crcache.ByObject{
				&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(labels.Set{"app": "db"})},
			},
		}
	}
	conform(t, threeConfigMaps, opts, func(t *testing.T, c crcache.Cache, ns string) {
		inf, err := c.GetInformer(t.Context(), &corev1.ConfigMap{})
		if err != nil {
			t.Fatal(err)
		}
		log := &handlerLog{}
		if _, err := inf.AddEventHandler(log.handler()); err != nil {
			t.Fatal(err)
		}
		eventually(t, "two resyncs of c", func() bool { return log.count("resync "+ns+"/c") >= 2 })
		if log.has("add " + ns + "/a") {
			t.Error("label selector of ByObject not applied")
		}
	})
}

// TestConformanceKindWithoutTypedSource reads a built-in kind kinformer's
// cache has no typed source for (it is served as unstructured and converted,
// as custom resources with Go types are).
func TestConformanceKindWithoutTypedSource(t *testing.T) {
	setup := func(t *testing.T, ns string) {
		_, err := clientset().StorageV1().CSIStorageCapacities(ns).Create(t.Context(), &storagev1.CSIStorageCapacity{
			ObjectMeta:       metav1.ObjectMeta{Name: "cap", Labels: map[string]string{"zone": "a"}},
			StorageClassName: "fast",
			Capacity:         ptrTo(resource.MustParse("10Gi")),
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	conform(t, setup, nil, func(t *testing.T, c crcache.Cache, ns string) {
		var got storagev1.CSIStorageCapacity
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "cap"}, &got); err != nil {
			t.Fatal(err)
		}
		if got.StorageClassName != "fast" || got.Capacity.String() != "10Gi" || got.Labels["zone"] != "a" {
			t.Errorf("got %+v", got)
		}
		if gvk := got.GroupVersionKind(); gvk != storagev1.SchemeGroupVersion.WithKind("CSIStorageCapacity") {
			t.Errorf("GVK %v", gvk)
		}
		var l storagev1.CSIStorageCapacityList
		if err := c.List(t.Context(), &l, client.InNamespace(ns)); err != nil || len(l.Items) != 1 {
			t.Errorf("List: %d items, %v", len(l.Items), err)
		}
		inf, err := c.GetInformerForKind(t.Context(), storagev1.SchemeGroupVersion.WithKind("CSIStorageCapacity"))
		if err != nil {
			t.Fatal(err)
		}
		log := &handlerLog{}
		reg, err := inf.AddEventHandler(log.handler())
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "registration synced", reg.HasSynced)
		if !log.has("add " + ns + "/cap") {
			t.Error("no add of cap")
		}
	})
}

func TestConformanceTwoNamespaces(t *testing.T) {
	second := map[string]string{} // the second namespace of each implementation's run
	setup := func(t *testing.T, ns string) {
		threeConfigMaps(t, ns)
		second[ns] = newNamespace(t)
		createConfigMap(t, second[ns], "d", map[string]string{"app": "web"}, nil)
	}
	opts := func(ns string) crcache.Options {
		return crcache.Options{DefaultNamespaces: map[string]crcache.Config{ns: {}, second[ns]: {}}}
	}
	conform(t, setup, opts, func(t *testing.T, c crcache.Cache, ns string) {
		ctx := t.Context()
		var l corev1.ConfigMapList
		if err := c.List(ctx, &l, client.MatchingLabels{"app": "web"}); err != nil {
			t.Fatal(err)
		}
		if got := cmNames(&l); !slices.Equal(got, []string{"a", "b", "d"}) {
			t.Errorf("web in both namespaces: %v", got)
		}
		var limited corev1.ConfigMapList
		if err := c.List(ctx, &limited, client.Limit(2)); err != nil || len(limited.Items) != 2 {
			t.Errorf("Limit 2 across namespaces: %d items, %v", len(limited.Items), err)
		}
		var d corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: second[ns], Name: "d"}, &d); err != nil {
			t.Errorf("Get in the second namespace: %v", err)
		}
		inf, err := c.GetInformer(ctx, &corev1.ConfigMap{})
		if err != nil {
			t.Fatal(err)
		}
		log := &handlerLog{}
		reg, err := inf.AddEventHandler(log.handler())
		if err != nil {
			t.Fatal(err)
		}
		if !toolscache.WaitFor(ctx, "", reg.HasSyncedChecker(), inf.HasSyncedChecker()) {
			t.Fatal("not synced")
		}
		if !log.has("add "+ns+"/a") || !log.has("add "+second[ns]+"/d") {
			t.Errorf("handler over both namespaces: %v", log.events)
		}
		if err := inf.RemoveEventHandler(reg); err != nil {
			t.Errorf("RemoveEventHandler: %v", err)
		}
		if err := c.Start(ctx); err == nil {
			t.Error("second Start succeeded")
		}
	})
}

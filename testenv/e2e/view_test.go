package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/testenv"
)

// cmView is what a controller reading config maps' labels and one part of
// their data declares: a projected view of corev1.ConfigMap.
type cmView struct {
	kube.ViewOf[*corev1.ConfigMap]
	Data      map[string]string `kube:"data"`
	Immutable *bool             `kube:"immutable"`
}

// projectConfigMap is what cmView should hold for cm: the full object
// projected by hand.
func projectConfigMap(cm *corev1.ConfigMap) cmView {
	v := cmView{Data: cm.Data, Immutable: cm.Immutable}
	v.Name, v.Namespace, v.UID, v.ResourceVersion = cm.Name, cm.Namespace, cm.UID, cm.ResourceVersion
	v.Generation, v.DeletionTimestamp, v.Labels, v.OwnerReferences = cm.Generation, cm.DeletionTimestamp, kube.LabelsOf(cm.Labels), cm.OwnerReferences
	return v
}

// normal maps empty maps and slices to nil, which protobuf does not tell
// apart.
func (v cmView) normal() cmView {
	if len(v.Data) == 0 {
		v.Data = nil
	}
	if len(v.OwnerReferences) == 0 {
		v.OwnerReferences = nil
	}
	return v
}

// requireViewsMatch waits until the view informer's cache holds exactly
// the full informer's objects projected, and the full one equals a fresh
// list from the server.
func requireViewsMatch(t *testing.T, full *informer.Shared[*corev1.ConfigMap], view *informer.Shared[*cmView], ns string) {
	t.Helper()
	requireCacheMatches(t, full.Cache(), listConfigMaps(ns))
	eventually(t, "view cache equals the full cache projected", func() (bool, string) {
		want := map[string]cmView{}
		for _, cm := range full.Cache().List() {
			want[cm.Name] = projectConfigMap(cm).normal()
		}
		got := map[string]cmView{}
		for _, v := range view.Cache().List() {
			got[v.Name] = v.normal()
		}
		if maps.EqualFunc(got, want, func(a, b cmView) bool { return reflect.DeepEqual(a, b) }) {
			return true, ""
		}
		var diffs []string
		for _, name := range slices.Sorted(maps.Keys(want)) {
			if g, ok := got[name]; !ok || !reflect.DeepEqual(g, want[name]) {
				diffs = append(diffs, fmt.Sprintf("%s: view %+v, want %+v", name, g, want[name]))
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				diffs = append(diffs, name+": in the view only")
			}
		}
		return false, fmt.Sprintf("%d views, %d full objects; %s", len(got), len(want), strings.Join(diffs[:min(len(diffs), 3)], "; "))
	})
}

// A projected informer equals the full informer projected, object for
// object: after the initial sync, creates, updates and deletes, a relist
// forced by etcd compaction (config maps have no watch cache here), and an
// apiserver restart.
func TestViewInformerEqualsTheFullInformerProjected(t *testing.T) {
	ns := namespace(t, "view")
	if err := env.CreateConfigMaps(t.Context(), ns, 40, testenv.BulkOptions{Labels: map[string]string{"app": "web"}}); err != nil {
		t.Fatal(err)
	}
	sel := kube.SourceOptions{Selection: kube.Selection{Namespace: ns}}
	fullSrc, err := kube.Source[*corev1.ConfigMap](t.Context(), env.RESTConfig(), sel)
	if err != nil {
		t.Fatal(err)
	}
	viewSrc, err := kube.Source[*cmView](t.Context(), env.RESTConfig(), sel)
	if err != nil {
		t.Fatal(err)
	}
	fullProbe, viewProbe := newProbe(fullSrc), newProbe(viewSrc)
	full := runInformer(t, fullProbe, informer.Options[*corev1.ConfigMap]{}, false)
	view := runInformer(t, viewProbe, informer.Options[*cmView]{}, false)
	requireViewsMatch(t, full.inf, view.inf, ns)

	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	change := func(names ...string) {
		for _, name := range names {
			cm, err := cms.Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data["changed"] = name
			cm.Labels["tier"] = "changed"
			cm.Immutable = new(bool)
			if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove := func(names ...string) {
		for _, name := range names {
			if err := cms.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Live changes through the watch.
	change("cm-0", "cm-1", "cm-2")
	remove("cm-3", "cm-4")
	if err := env.CreateConfigMaps(t.Context(), ns, 3, testenv.BulkOptions{NamePrefix: "live-"}); err != nil {
		t.Fatal(err)
	}
	requireViewsMatch(t, full.inf, view.inf, ns)

	// Changes while both watches are held back, then a compaction: both
	// watches resume at a version etcd no longer has and relist.
	fullBefore, viewBefore := relists(fullProbe), relists(viewProbe)
	fullProbe.pause()
	viewProbe.pause()
	change("cm-5", "cm-6")
	remove("cm-7", "live-0")
	if err := env.CreateConfigMaps(t.Context(), ns, 2, testenv.BulkOptions{NamePrefix: "gap-"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.CompactEtcd(t.Context()); err != nil {
		t.Fatal(err)
	}
	fullProbe.resume()
	viewProbe.resume()
	requireViewsMatch(t, full.inf, view.inf, ns)
	if relists(fullProbe) <= fullBefore || relists(viewProbe) <= viewBefore {
		t.Errorf("the compaction forced no relist: full %d -> %d, view %d -> %d",
			fullBefore, relists(fullProbe), viewBefore, relists(viewProbe))
	}
	if !viewProbe.sawExpired() {
		t.Error("the view's watch never saw 410 Gone after the compaction")
	}

	// An apiserver restart, and changes after it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	defer cancel()
	if err := env.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	change("cm-8")
	remove("cm-9")
	if err := env.CreateConfigMaps(t.Context(), ns, 2, testenv.BulkOptions{NamePrefix: "after-"}); err != nil {
		t.Fatal(err)
	}
	requireViewsMatch(t, full.inf, view.inf, ns)
	if got := len(view.inf.Cache().List()); got != 40+3+2+2-2-2-1 {
		t.Errorf("the view caches %d config maps, want %d", got, 40+3+2+2-2-2-1)
	}
}

// A view that declares a field the full type does not have fails when it
// is built, naming the field and the path, before any request.
func TestViewWithAMissingFieldFailsAtConstruction(t *testing.T) {
	type badView struct {
		kube.ViewOf[*corev1.ConfigMap]
		Replicas int32 `kube:"spec.replicas"` // config maps have no spec
	}
	_, err := kube.Source[*badView](t.Context(), env.RESTConfig(), kube.SourceOptions{})
	if !errors.Is(err, kube.ErrInvalidView) {
		t.Fatalf("View of a missing field: %v, want an error wrapping ErrInvalidView", err)
	}
	for _, want := range []string{"Replicas", "spec.replicas"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	f, err := kube.NewFactory(env.RESTConfig(), kube.FactoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	if _, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[*badView]{}); !errors.Is(err, kube.ErrInvalidView) {
		t.Errorf("Informer of a view with a missing field: %v, want ErrInvalidView", err)
	}
	if n := len(f.WaitForCacheSync(t.Context())); n != 0 {
		t.Errorf("the factory holds %d informers after a failed view Informer", n)
	}
}

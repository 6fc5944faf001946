// Package e2e runs client-go's SharedIndexInformer and the adapter side by
// side against the real local control plane of package testenv, and requires
// the same notifications and the same cache from both.
package e2e

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/integrations/clientgo"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testenv.Tests{M: m, Name: "e2e", Env: &env})
}

// recorder writes each notification down per object: "add initial",
// "add", "update", "delete".
type recorder struct {
	mu    sync.Mutex
	byObj map[string][]string
}

func (r *recorder) record(obj any, what string) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj, what = d.Obj, what+" unknown"
	}
	name := obj.(*corev1.ConfigMap).Name
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byObj[name] = append(r.byObj[name], what)
}

func (r *recorder) OnAdd(obj any, initial bool) {
	if initial {
		r.record(obj, "add initial")
		return
	}
	r.record(obj, "add")
}
func (r *recorder) OnUpdate(old, obj any) {
	if old.(*corev1.ConfigMap).ResourceVersion != obj.(*corev1.ConfigMap).ResourceVersion {
		r.record(obj, "update")
	}
}
func (r *recorder) OnDelete(obj any) { r.record(obj, "delete") }

func (r *recorder) snapshot() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for k, v := range r.byObj {
		out[k] = slices.Clone(v)
	}
	return out
}

func versions(objs []any) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		cm := o.(*corev1.ConfigMap)
		out[cm.Name] = cm.ResourceVersion
	}
	return out
}

func TestSameNotificationsAsClientGo(t *testing.T) {
	ctx := t.Context()
	ns := "clientgo-e2e"
	if err := env.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	create := func(name string) {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("a")
	create("b")

	reference := toolscache.NewSharedIndexInformer(
		toolscache.NewListWatchFromClient(env.Clientset().CoreV1().RESTClient(), "configmaps", ns, fields.Everything()),
		&corev1.ConfigMap{}, 0, toolscache.Indexers{})
	src, err := kube.Source[*corev1.ConfigMap](t.Context(), env.RESTConfig(), kube.SourceOptions{Selection: kube.Selection{Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := clientgo.New(clientgo.Options[*corev1.ConfigMap]{Informer: informer.Options[*corev1.ConfigMap]{Source: src}})
	if err != nil {
		t.Fatal(err)
	}
	infs := map[string]toolscache.SharedIndexInformer{"client-go": reference, "kinformer": ours}
	recs := map[string]*recorder{}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for name, inf := range infs {
		recs[name] = &recorder{byObj: map[string][]string{}}
		reg, err := inf.AddEventHandler(recs[name])
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { inf.RunWithContext(runCtx) })
		if !toolscache.WaitFor(ctx, "", inf.HasSyncedChecker(), reg.HasSyncedChecker()) {
			t.Fatalf("%s never synced", name)
		}
	}

	create("c")
	a, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.Data = map[string]string{"k": "v"}
	if _, err := cms.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]string{}
	for _, cm := range list.Items {
		truth[cm.Name] = cm.ResourceVersion
	}
	want := map[string][]string{
		"a": {"add initial", "update"},
		"b": {"add initial", "delete"},
		"c": {"add"},
	}
	for name, inf := range infs {
		deadline := time.Now().Add(time.Minute) // a bound against hangs, not a measurement
		for !maps.Equal(versions(inf.GetStore().List()), truth) || !maps.EqualFunc(recs[name].snapshot(), want, slices.Equal) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: cache %v (server %v), notifications %v (want %v)",
					name, versions(inf.GetStore().List()), truth, recs[name].snapshot(), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got := inf.LastSyncResourceVersion(); got == "" {
			t.Errorf("%s: no LastSyncResourceVersion", name)
		}
	}
}

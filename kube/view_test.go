package kube

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
)

type testPodView struct {
	ViewOf[*corev1.Pod]
	NodeName   string `kube:"spec.nodeName"`
	Containers []struct {
		Name  string `kube:"name"`
		Image string `kube:"image"`
	} `kube:"spec.containers"`
	Phase corev1.PodPhase `kube:"status.phase"`
}

// otherPodView is a second view of pods, for Key tests.
type otherPodView struct {
	ViewOf[*corev1.Pod]
	Phase corev1.PodPhase `kube:"status.phase"`
}

// projectTestPod is what testPodView must hold for p.
func projectTestPod(p *corev1.Pod) *testPodView {
	v := &testPodView{ViewOf: ViewOf[*corev1.Pod]{ViewMeta: ViewMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID,
		ResourceVersion: p.ResourceVersion, Generation: p.Generation, DeletionTimestamp: p.DeletionTimestamp,
		Labels: LabelsOf(p.Labels), OwnerReferences: p.OwnerReferences}}, NodeName: p.Spec.NodeName, Phase: p.Status.Phase}
	for _, c := range p.Spec.Containers {
		v.Containers = append(v.Containers, struct {
			Name  string `kube:"name"`
			Image string `kube:"image"`
		}{c.Name, c.Image})
	}
	return v
}

func viewTestPods(n int) []*corev1.Pod {
	var pods []*corev1.Pod
	yes := true
	for i := range n {
		p := pod("ns-"+strconv.Itoa(i%3), "p"+strconv.Itoa(i), strconv.Itoa(100+i))
		p.UID = types.UID("uid-" + strconv.Itoa(i))
		p.Labels = map[string]string{"app": "web", "i": strconv.Itoa(i)}
		p.Annotations = map[string]string{"big": strings.Repeat("x", 500)}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: &yes}}
		p.Spec.Containers = []corev1.Container{{Name: "app", Image: "img:" + strconv.Itoa(i%2), Args: []string{"a", "b"}}}
		p.Status.Phase = corev1.PodRunning
		pods = append(pods, p)
	}
	return pods
}

// viewServer serves pods in protobuf or JSON: a plain list, or a
// streaming list (ADDED events, then the bookmark ending them) that stays
// open, as do other watches, until the client goes away.
func viewServer(t *testing.T, proto bool, pods []*corev1.Pod) *rest.Config {
	return fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("watch") != "true" {
			list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1000"}}
			for _, p := range pods {
				list.Items = append(list.Items, *p.DeepCopy())
			}
			if proto {
				writeBody(w, mediaProto, protoBytes(t, list))
			} else {
				writeBody(w, mediaJSON, jsonBytes(t, list))
			}
			return
		}
		frame := func(typ string, obj runtime.Object) []byte {
			if proto {
				return protoFrame(t, typ, obj)
			}
			return jsonFrame(t, typ, obj)
		}
		if proto {
			w.Header().Set("Content-Type", mediaProtoWatch)
		} else {
			w.Header().Set("Content-Type", mediaJSON)
		}
		w.WriteHeader(http.StatusOK)
		if q.Get("sendInitialEvents") == "true" {
			for _, p := range pods {
				_, _ = w.Write(frame("ADDED", p.DeepCopy()))
			}
			end := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1000",
				Annotations: map[string]string{"k8s.io/initial-events-end": "true"}}}
			_, _ = w.Write(frame("BOOKMARK", end))
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
}

func TestViewListDecodesProtobufAndJSONIntoTheView(t *testing.T) {
	pods := viewTestPods(20)
	for _, proto := range []bool{true, false} {
		src, err := Source[*testPodView](t.Context(), viewServer(t, proto, pods), SourceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		page, err := src.List(context.Background(), listwatch.Options{})
		if err != nil {
			t.Fatalf("proto %v: %v", proto, err)
		}
		if page.ResourceVersion != "1000" || len(page.Items) != len(pods) {
			t.Fatalf("proto %v: version %q, %d items", proto, page.ResourceVersion, len(page.Items))
		}
		for i, p := range pods {
			if want := projectTestPod(p); !reflect.DeepEqual(page.Items[i], want) {
				t.Fatalf("proto %v: item %d\n got %+v\nwant %+v", proto, i, page.Items[i], want)
			}
		}
	}
}

// TestViewInformerSyncsFromStreamingList: the streaming list ends at its
// bookmark although the view keeps no annotations, in both encodings,
// and the lister sees the views.
func TestViewInformerSyncsFromStreamingList(t *testing.T) {
	pods := viewTestPods(10)
	for _, proto := range []bool{true, false} {
		f, err := NewFactory(viewServer(t, proto, pods), FactoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		inf, _, err := Informer(t.Context(), f, InformerOptions[*testPodView]{})
		if err != nil {
			t.Fatal(err)
		}
		lister := informer.NewLister(inf.Cache())
		ctx, cancel := context.WithCancel(context.Background())
		f.Start(ctx)
		// A guard against a hang, not a timing: the sync needs milliseconds.
		waitCtx, stop := context.WithTimeout(ctx, time.Minute)
		defer stop()
		for key, ok := range f.WaitForCacheSync(waitCtx) {
			if !ok {
				t.Fatalf("proto %v: %s did not sync", proto, key)
			}
		}
		got, err := lister.List(labels.SelectorFromSet(labels.Set{"app": "web"}))
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(got, func(i, j int) bool { return got[i].UID < got[j].UID })
		want := make([]*testPodView, 0, len(pods))
		for _, p := range pods {
			want = append(want, projectTestPod(p))
		}
		sort.Slice(want, func(i, j int) bool { return want[i].UID < want[j].UID })
		if !reflect.DeepEqual(got, want) {
			t.Errorf("proto %v: lister has %d views, want %d (or they differ)", proto, len(got), len(want))
		}
		cancel()
		f.Shutdown()
	}
}

type badPathView struct {
	ViewOf[*corev1.Pod]
	Node string `kube:"spec.nodeNme"`
}

type badTypeView struct {
	ViewOf[*corev1.Pod]
	Spec string `kube:"spec"`
}

type untaggedView struct {
	ViewOf[*corev1.Pod]
	Phase string
}

func TestViewRejectsInvalidViewNamingFieldAndPath(t *testing.T) {
	cfg := &rest.Config{Host: "http://127.0.0.1:1"}
	for _, tc := range []struct {
		name string
		make func() error
		want []string
	}{
		{"unknown path", func() error { _, err := Source[*badPathView](t.Context(), cfg, SourceOptions{}); return err },
			[]string{"badPathView", "Node", `"spec.nodeNme"`, `no field "nodeNme"`}},
		{"wrong type", func() error { _, err := Source[*badTypeView](t.Context(), cfg, SourceOptions{}); return err },
			[]string{"badTypeView", "Spec", "cannot hold v1.PodSpec"}},
		{"untagged", func() error { _, err := Source[*untaggedView](t.Context(), cfg, SourceOptions{}); return err },
			[]string{"untaggedView", "Phase", "no kube tag"}},
		{"factory", func() error {
			f, _ := NewFactory(cfg, FactoryOptions{})
			defer f.Shutdown()
			_, _, err := Informer(t.Context(), f, InformerOptions[*badPathView]{})
			return err
		}, []string{"badPathView", "nodeNme"}},
	} {
		err := tc.make()
		if !errors.Is(err, ErrInvalidView) {
			t.Errorf("%s: err = %v, want ErrInvalidView", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not name %s", tc.name, err, w)
			}
		}
	}
}

func TestViewInformerKeyDistinguishesViewTypes(t *testing.T) {
	f, err := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, FactoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	a, _, _ := Informer(t.Context(), f, InformerOptions[*testPodView]{})
	a2, _, _ := Informer(t.Context(), f, InformerOptions[*testPodView]{})
	b, _, err := Informer(t.Context(), f, InformerOptions[*otherPodView]{})
	if err != nil {
		t.Fatal(err)
	}
	full, _, _ := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{})
	if a == nil || a != a2 || any(a) == any(b) || any(a) == any(full) {
		t.Fatal("view informers are not one per view type")
	}
	keys := map[string]bool{}
	f.mu.Lock()
	for k := range f.informers {
		keys[k.String()] = true
	}
	f.mu.Unlock()
	for _, want := range []string{
		"pods as kube.testPodView",
		"pods as kube.otherPodView",
		"pods",
	} {
		if !keys[want] {
			t.Errorf("no key %q in %v", want, keys)
		}
	}
	ref, err := Acquire(t.Context(), f, InformerOptions[*otherPodView]{})
	if err != nil || ref.Informer() != b {
		t.Fatalf("AcquireView: %v, same informer %v", err, ref != nil && ref.Informer() == b)
	}
	ref.Release()
}

type noUIDView struct {
	Name string `kube:"metadata.name"`
}

func (v *noUIDView) GetName() string            { return v.Name }
func (v *noUIDView) GetNamespace() string       { return "" }
func (v *noUIDView) GetResourceVersion() string { return "" }

func TestViewShardNeedsUID(t *testing.T) {
	set, err := shard.NewSet(shard.UID, shard.Split(2)[1])
	if err != nil {
		t.Fatal(err)
	}
	// Only a view of a custom resource can lack GetUID (ViewOf brings it).
	var paths []string
	cfg := fakeServer(t, crdServer(t, widgetCRD, &paths))
	if _, err := Source[*noUIDView](t.Context(), cfg, SourceOptions{Resource: widgets, Selection: Selection{Shard: set}}); !errors.Is(err, ErrInvalidView) {
		t.Errorf("sharded view without GetUID: err = %v", err)
	}
	if _, err := Source[*widgetView](t.Context(), cfg, SourceOptions{Resource: widgets, Selection: Selection{Shard: set}}); err != nil {
		t.Errorf("sharded view of a custom resource: %v", err)
	}
	if _, err := Source[*testPodView](t.Context(), cfg, SourceOptions{Selection: Selection{Shard: set}}); err != nil {
		t.Errorf("sharded view: %v", err)
	}
}

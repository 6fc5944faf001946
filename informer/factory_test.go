package informer

import (
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// sources hands out one fake source per namespace and remembers them.
type sources[T fake.Object] struct {
	t      *testing.T
	byNS   map[string]*fake.Source[T]
	setup  func(ns string, src *fake.Source[T])
	called int
}

func (s *sources[T]) new(ns string) (listwatch.ListerWatcher[T], error) {
	s.called++
	src, err := fake.New(fake.Options[T]{})
	if err != nil {
		return nil, err
	}
	if s.setup != nil {
		s.setup(ns, src)
	}
	if s.byNS == nil {
		s.byNS = map[string]*fake.Source[T]{}
	}
	s.byNS[ns] = src
	return src, nil
}

func TestFactorySharesOneInformerPerTypeNamespaceAndSelectors(t *testing.T) {
	f := NewFactory(FactoryOptions{Namespace: "default", DefaultResync: time.Hour})
	src := &sources[*corev1.ConfigMap]{t: t}
	get := func(o InformerOptions[*corev1.ConfigMap]) *cmInformer {
		inf, err := InformerFor(f, o, src.new)
		if err != nil {
			t.Fatal(err)
		}
		return inf
	}
	a := get(InformerOptions[*corev1.ConfigMap]{})
	if b := get(InformerOptions[*corev1.ConfigMap]{}); b != a {
		t.Error("same key gave two informers")
	}
	if b := get(InformerOptions[*corev1.ConfigMap]{Namespace: "default"}); b != a {
		t.Error("the factory's namespace, given explicitly, gave another informer")
	}
	others := []*cmInformer{
		get(InformerOptions[*corev1.ConfigMap]{Namespace: "kube-system"}),
		get(InformerOptions[*corev1.ConfigMap]{LabelSelector: "app=web"}),
		get(InformerOptions[*corev1.ConfigMap]{FieldSelector: "metadata.name=x", ResyncPeriod: time.Minute}),
	}
	for i, o := range others {
		if o == a {
			t.Errorf("informer %d shares the default one", i)
		}
	}
	pods, err := InformerFor(f, InformerOptions[*corev1.Pod]{}, (&sources[*corev1.Pod]{t: t}).new)
	if err != nil || pods == nil {
		t.Fatalf("pods: %v", err)
	}
	if src.called != 4 {
		t.Errorf("%d sources made, want 4", src.called)
	}
	if a.resync != time.Hour || others[2].resync != time.Minute {
		t.Errorf("resync %v and %v, want the factory default 1h and the per-type 1m", a.resync, others[2].resync)
	}
	if _, ok := src.byNS["kube-system"]; !ok {
		t.Error("namespace override not passed to the source")
	}
	// Later calls add indexers to the shared informer.
	if _, err := InformerFor(f, InformerOptions[*corev1.ConfigMap]{
		Indexers: cache.Indexers[*corev1.ConfigMap]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[*corev1.ConfigMap]},
	}, src.new); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.GetIndexer().GetIndexers()[cache.NamespaceIndex]; !ok {
		t.Error("indexer of a later call not added")
	}
}

func TestFactoryStartsNewInformersWaitsForSyncAndShutsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errs := &errSink{}
		f := NewFactory(FactoryOptions{
			ErrorHandler: errs.add,
			Tweak:        func(o *listwatch.Options) { o.TimeoutSeconds = 42 },
			Transform:    DropManagedFields[cache.Object],
		})
		src := &sources[*corev1.ConfigMap]{t: t, setup: func(ns string, s *fake.Source[*corev1.ConfigMap]) {
			obj := cm("x", 0)
			obj.Labels = map[string]string{"app": "web"}
			obj.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}}
			s.Create(obj)
		}}
		first, err := InformerFor(f, InformerOptions[*corev1.ConfigMap]{LabelSelector: "app=web"}, src.new)
		if err != nil {
			t.Fatal(err)
		}
		f.Start(t.Context())
		synced := f.WaitForCacheSync(t.Context())
		if len(synced) != 1 || !synced[InformerKey{Type: reflect.TypeFor[*corev1.ConfigMap](), LabelSelector: "app=web"}] {
			t.Errorf("WaitForCacheSync = %v, want the one informer synced", synced)
		}

		second, err := InformerFor(f, InformerOptions[*corev1.ConfigMap]{Namespace: "other"}, src.new)
		if err != nil {
			t.Fatal(err)
		}
		f.Start(t.Context()) // starts only the second
		synced = f.WaitForCacheSync(t.Context())
		if len(synced) != 2 || !second.HasSynced() {
			t.Errorf("WaitForCacheSync = %v, want both synced", synced)
		}

		obj, ok, _ := first.GetStore().GetByKey("ns/x")
		if !ok || obj.ManagedFields != nil {
			t.Errorf("factory transform not applied: %v", obj)
		}
		calls := src.byNS[""].WatchCalls()
		if len(calls) == 0 || calls[0].LabelSelector != "app=web" || calls[0].TimeoutSeconds != 42 {
			t.Errorf("watch calls %+v, want the selector and the tweak applied", calls)
		}

		f.Shutdown()
		if !first.IsStopped() || !second.IsStopped() {
			t.Error("Shutdown returned with an informer still running")
		}
		third, _ := InformerFor(f, InformerOptions[*corev1.ConfigMap]{Namespace: "third"}, src.new)
		f.Start(t.Context())
		synctest.Wait()
		if third.HasSynced() {
			t.Error("Start after Shutdown started an informer")
		}
		if e := errs.all(); len(e) > 0 {
			t.Errorf("errors: %v", e)
		}
	})
}

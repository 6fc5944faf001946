package informer

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/cache"
)

func pod(ns, name string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	slices.Sort(out)
	return out
}

func TestListerReadsWithAndWithoutNamespaceIndex(t *testing.T) {
	for _, indexed := range []bool{true, false} {
		t.Run(map[bool]string{true: "indexed", false: "scan"}[indexed], func(t *testing.T) {
			opts := cache.IndexerOptions[*corev1.Pod]{}
			if indexed {
				opts.Indexers = cache.Indexers[*corev1.Pod]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[*corev1.Pod]}
			}
			idx := cache.NewIndexer(opts)
			for _, p := range []*corev1.Pod{
				pod("a", "web-1", map[string]string{"app": "web"}),
				pod("a", "db-1", map[string]string{"app": "db"}),
				pod("b", "web-2", map[string]string{"app": "web"}),
				pod("b", "other", nil),
			} {
				if err := idx.Add(p); err != nil {
					t.Fatal(err)
				}
			}
			l := NewLister(idx.Reader())
			web := labels.SelectorFromSet(labels.Set{"app": "web"})

			cases := []struct {
				name string
				list func() ([]*corev1.Pod, error)
				want []string
			}{
				{"all", func() ([]*corev1.Pod, error) { return l.List(labels.Everything()) }, []string{"a/db-1", "a/web-1", "b/other", "b/web-2"}},
				{"nil selector", func() ([]*corev1.Pod, error) { return l.List(nil) }, []string{"a/db-1", "a/web-1", "b/other", "b/web-2"}},
				{"web", func() ([]*corev1.Pod, error) { return l.List(web) }, []string{"a/web-1", "b/web-2"}},
				{"ns a", func() ([]*corev1.Pod, error) { return l.Namespace("a").List(nil) }, []string{"a/db-1", "a/web-1"}},
				{"ns b web", func() ([]*corev1.Pod, error) { return l.Namespace("b").List(web) }, []string{"b/web-2"}},
				{"ns all web", func() ([]*corev1.Pod, error) { return l.Namespace(metav1.NamespaceAll).List(web) }, []string{"a/web-1", "b/web-2"}},
				{"ns empty", func() ([]*corev1.Pod, error) { return l.Namespace("c").List(nil) }, nil},
			}
			for _, c := range cases {
				got, err := c.list()
				if err != nil {
					t.Errorf("%s: %v", c.name, err)
				}
				if !slices.Equal(names(got), c.want) {
					t.Errorf("%s: got %v, want %v", c.name, names(got), c.want)
				}
			}

			p, err := l.Namespace("b").Get("web-2")
			if err != nil || p.Name != "web-2" {
				t.Errorf("Get b/web-2: %v, %v", p, err)
			}
			_, err = l.Namespace("a").Get("web-2")
			var nf *NotFoundError
			if !errors.Is(err, ErrNotFound) || !apierrors.IsNotFound(err) || !errors.As(err, &nf) || nf.Namespace != "a" {
				t.Errorf("Get a/web-2: %v, want a NotFoundError in namespace a that apierrors.IsNotFound accepts", err)
			}
		})
	}
}

func TestListerGetsClusterScopedObjects(t *testing.T) {
	idx := cache.NewIndexer(cache.IndexerOptions[*corev1.Node]{})
	if err := idx.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}); err != nil {
		t.Fatal(err)
	}
	l := NewLister(idx.Reader())
	if n, err := l.Get("n1"); err != nil || n.Name != "n1" {
		t.Errorf("Get n1: %v, %v", n, err)
	}
	if _, err := l.Get("n2"); !apierrors.IsNotFound(err) {
		t.Errorf("Get n2: %v, want not found", err)
	}
}

func BenchmarkListerNamespaceList(b *testing.B) {
	idx := cache.NewIndexer(cache.IndexerOptions[*corev1.Pod]{
		Indexers: cache.Indexers[*corev1.Pod]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[*corev1.Pod]},
	})
	for i := range 1000 {
		ns := []string{"a", "b", "c", "d"}[i%4]
		idx.Add(pod(ns, string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)), map[string]string{"app": []string{"web", "db"}[i%2]}))
	}
	l := NewLister(idx.Reader())
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Namespace("b").List(sel); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestListerGetWithDefaultAndCustomKeys reads through indexers keyed by
// the default key function and by a custom one giving the same keys (the
// store then keeps a flat map of keys), and expects the same answers.
func TestListerGetWithDefaultAndCustomKeys(t *testing.T) {
	sameKeys := func(p *corev1.Pod) (string, error) {
		if p.Namespace == "" {
			return p.Name, nil
		}
		return p.Namespace + "/" + p.Name, nil
	}
	for _, keyFunc := range []cache.KeyFunc[*corev1.Pod]{nil, sameKeys} {
		base := cache.NewIndexer(cache.IndexerOptions[*corev1.Pod]{KeyFunc: keyFunc})
		for _, p := range []*corev1.Pod{pod("a", "web", nil), pod("b", "web", nil), pod("", "global", nil)} {
			if err := base.Add(p); err != nil {
				t.Fatal(err)
			}
		}
		for _, idx := range []*cache.Indexer[*corev1.Pod]{base} {
			l := NewLister(idx.Reader())
			for _, c := range []struct {
				ns, name string
				found    bool
			}{{"a", "web", true}, {"b", "web", true}, {"c", "web", false}, {"", "global", true}, {"", "web", false}, {"a", "global", false}} {
				p, err := l.Namespace(c.ns).Get(c.name)
				if c.found && (err != nil || p.Namespace != c.ns || p.Name != c.name) {
					t.Errorf("%T: Get %s/%s = %v, %v", idx, c.ns, c.name, p, err)
				}
				if !c.found && !errors.Is(err, ErrNotFound) {
					t.Errorf("%T: Get %s/%s = %v, want not found", idx, c.ns, c.name, err)
				}
			}
			if p, err := l.Get("global"); err != nil || p.Name != "global" {
				t.Errorf("%T: Lister.Get global = %v, %v", idx, p, err)
			}
		}
	}
}

func TestListerNamespaceGetAllocatesNothing(t *testing.T) {
	idx := cache.NewIndexer(cache.IndexerOptions[*corev1.Pod]{
		Indexers: cache.Indexers[*corev1.Pod]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[*corev1.Pod]},
	})
	if err := idx.Add(pod("a", "web", nil)); err != nil {
		t.Fatal(err)
	}
	l := NewLister(idx.Reader())
	ns, name := "a", "web"
	if allocs := testing.AllocsPerRun(100, func() { _, _ = l.Namespace(ns).Get(name) }); allocs != 0 {
		t.Errorf("NamespaceLister.Get allocates %v times", allocs)
	}
}

func BenchmarkListerNamespaceGet(b *testing.B) {
	idx := cache.NewIndexer(cache.IndexerOptions[*corev1.Pod]{
		Indexers: cache.Indexers[*corev1.Pod]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[*corev1.Pod]},
	})
	var pods []*corev1.Pod
	for i := range 10_000 {
		p := pod([]string{"ns-1", "ns-2", "ns-3", "ns-4"}[i%4], "pod-name-"+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)), nil)
		pods = append(pods, p)
		if err := idx.Add(p); err != nil {
			b.Fatal(err)
		}
	}
	l := NewLister(idx.Reader())
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			p := pods[i%len(pods)]
			if _, err := l.Namespace(p.Namespace).Get(p.Name); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

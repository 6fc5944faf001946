package informer_test

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
)

// A lister reads a cache with typed results: no type assertions.
func ExampleLister() {
	// An informer's Cache() is the usual source; this indexer is filled by
	// hand.
	idx := cache.NewIndexer(cache.IndexerOptions[*corev1.Pod]{
		Indexers: cache.Indexers[*corev1.Pod]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[*corev1.Pod]},
	})
	for _, p := range []struct{ ns, name, app string }{
		{"shop", "web-0", "web"}, {"shop", "web-1", "web"}, {"shop", "db-0", "db"}, {"blog", "web-0", "web"},
	} {
		idx.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name, Labels: map[string]string{"app": p.app}}})
	}

	pods := informer.NewLister(idx.Reader())
	web, _ := pods.Namespace("shop").List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	var got []string
	for _, p := range web { // p is a *corev1.Pod: shared, do not mutate
		got = append(got, p.Name)
	}
	slices.Sort(got)
	fmt.Println("web pods in shop:", got)

	db, _ := pods.Namespace("shop").Get("db-0")
	fmt.Println("found:", db.Name)

	_, err := pods.Namespace("blog").Get("db-0")
	fmt.Println("not found:", apierrors.IsNotFound(err))
	// Output:
	// web pods in shop: [web-0 web-1]
	// found: db-0
	// not found: true
}

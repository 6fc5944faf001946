package informer_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// A factory shares one informer per type, namespace and selectors among
// everyone who asks for it, and owns their goroutines.
func ExampleFactory() {
	// newSource would normally build a kube-apiserver source for the
	// namespace; here each informer gets an in-memory one.
	newSource := func(namespace string) (listwatch.ListerWatcher[*corev1.Pod], error) {
		src, err := fake.New(fake.Options[*corev1.Pod]{})
		if err != nil {
			return nil, err
		}
		src.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0"}})
		return src, nil
	}

	f := informer.NewFactory(informer.FactoryOptions{
		Namespace:     "shop",
		DefaultResync: 10 * time.Minute,
		Transform:     informer.DropManagedFields[cache.Object],
	})
	// Two controllers ask for pods: they get the same informer.
	a, _ := informer.InformerFor(f, informer.InformerOptions[*corev1.Pod]{}, newSource)
	b, _ := informer.InformerFor(f, informer.InformerOptions[*corev1.Pod]{}, newSource)
	fmt.Println("shared:", a == b)

	f.Start(context.Background())
	defer f.Shutdown() // stops the informers and waits for their goroutines

	for key, synced := range f.WaitForCacheSync(context.Background()) {
		fmt.Printf("%s synced: %v\n", key, synced)
	}
	fmt.Println("cached pods:", len(a.GetStore().List()))
	// Output:
	// shared: true
	// *v1.Pod namespace=shop synced: true
	// cached pods: 1
}

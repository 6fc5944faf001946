package clientgo_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/integrations/clientgo"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// A kinformer informer handed to code that takes client-go's
// SharedIndexInformer. The source here is kinformer's in-memory fake; with a
// cluster it is kube.Source, or the informer comes from a kube.Factory
// (Options.Shared).
func ExampleNew() {
	src, _ := fake.New(fake.Options[*corev1.ConfigMap]{})
	_, _ = src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "prices"}})

	inf, err := clientgo.New(clientgo.Options[*corev1.ConfigMap]{
		Informer: informer.Options[*corev1.ConfigMap]{Source: src},
	})
	if err != nil {
		panic(err)
	}
	var sii toolscache.SharedIndexInformer = inf // what client-go code takes

	added := make(chan string, 1)
	reg, _ := sii.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { added <- obj.(*corev1.ConfigMap).Name },
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); sii.RunWithContext(ctx) }()

	toolscache.WaitFor(ctx, "", reg.HasSyncedChecker())
	fmt.Println("added:", <-added)
	_, exists, _ := sii.GetIndexer().GetByKey("shop/prices")
	fmt.Println("cached:", exists)
	fmt.Println("write:", sii.GetIndexer().Add(&corev1.ConfigMap{}) != nil)
	cancel()
	<-done
	// Output:
	// added: prices
	// cached: true
	// write: true
}

package kube_test

import (
	"context"
	"fmt"
	"log"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// The generic equivalent of client-go's factory.Core().V1().Pods(): one
// shared informer per resource, selection and type, no generated code.
// (It needs a cluster, so it has no checked output.)
func ExampleNewFactory() {
	ctx := context.Background()
	cfg, err := kube.LoadConfig(kube.ConfigOptions{})
	if err != nil {
		log.Fatal(err)
	}
	f, err := kube.NewFactory(cfg, kube.FactoryOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Shutdown() // stops every informer and waits for its goroutines

	pods, _, err := kube.Informer(ctx, f, kube.InformerOptions[*corev1.Pod]{
		Selection: kube.Selection{Namespace: "shop"},
		Transform: informer.DropManagedFields[*corev1.Pod],
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = pods.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, _ bool) { fmt.Println("pod", p.Name, p.Status.Phase) },
	}, informer.HandlerOptions{})
	if err != nil {
		log.Fatal(err)
	}
	nodeInf, _, err := kube.Informer(ctx, f, kube.InformerOptions[*corev1.Node]{})
	if err != nil {
		log.Fatal(err)
	}
	nodes := informer.NewLister(nodeInf.Cache())

	f.Start(ctx)
	for key, synced := range f.WaitForCacheSync(ctx) {
		fmt.Println(key, "synced:", synced) // "pods -n shop synced: true", "nodes synced: true"
	}
	all, _ := nodes.List(labels.Everything())
	fmt.Println(len(all), "nodes")
}

// An informer per custom resource, taken while its definition exists and
// released when it is deleted: the last Release stops that informer alone
// and frees its cache. (It needs a cluster, so it has no checked output.)
func ExampleAcquire() {
	ctx := context.Background()
	cfg, err := kube.LoadConfig(kube.ConfigOptions{})
	if err != nil {
		log.Fatal(err)
	}
	f, err := kube.NewFactory(cfg, kube.FactoryOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Shutdown()
	f.Start(ctx) // informers acquired from now on start at once

	res, err := kube.Resolve(ctx, cfg, "widgets.example.com")
	if err != nil {
		log.Fatal(err)
	}
	widgets, err := kube.Acquire(ctx, f, kube.InformerOptions[*unstructured.Unstructured]{Resource: res})
	if err != nil {
		log.Fatal(err)
	}
	if widgets.Informer().WaitForCacheSync(ctx) {
		fmt.Println(len(widgets.Informer().Cache().List()), "widgets")
	}
	// ... once the CustomResourceDefinition is gone:
	widgets.Release() // stops the widgets informer and waits for it
}

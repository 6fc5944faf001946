// Command clientgo is the controller of examples/compare written with
// client-go, for comparison: the pods labelled app=web, a handler feeding
// a work queue, two workers reading each pod back from the cache.
package main

import (
	"context"
	"fmt"
	"log"
	"os/signal"
	"sync"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		log.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(
		func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }))
	defer f.Shutdown()
	pods := f.Core().V1().Pods()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			q.Add(key)
		}
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		log.Fatal(err)
	}
	lister := pods.Lister()
	f.Start(ctx.Done())

	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for key, quit := q.Get(); !quit; key, quit = q.Get() {
				ns, name, _ := cache.SplitMetaNamespaceKey(key)
				if pod, err := lister.Pods(ns).Get(name); err == nil {
					fmt.Println(key, pod.Status.Phase)
				}
				q.Done(key)
			}
		})
	}
	<-ctx.Done()
	q.ShutDown()
	wg.Wait()
}

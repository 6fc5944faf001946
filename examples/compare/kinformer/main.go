// Command kinformer is the controller of examples/compare written with
// kinformer: the pods labelled app=web, a handler feeding a work queue,
// two workers reading each pod back from the cache.
package main

import (
	"context"
	"fmt"
	"log"
	"os/signal"
	"sync"
	"syscall"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/workqueue"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg, err := kube.LoadConfig(kube.ConfigOptions{})
	if err != nil {
		log.Fatal(err)
	}
	f, err := kube.NewFactory(cfg, kube.FactoryOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Shutdown()
	pods, _, err := kube.Informer(ctx, f, kube.InformerOptions[*corev1.Pod]{Selection: kube.Selection{LabelSelector: "app=web"}})
	if err != nil {
		log.Fatal(err)
	}
	q := workqueue.New(workqueue.Options[string]{Name: "pods"})
	if _, err := pods.AddHandler(workqueue.NewEnqueue(q, workqueue.EnqueueOptions[*corev1.Pod, string]{
		Key: cache.MetaNamespaceKey[*corev1.Pod],
	}), informer.HandlerOptions{}); err != nil {
		log.Fatal(err)
	}
	lister := informer.NewLister(pods.Cache())
	f.Start(ctx)

	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for key, err := q.Get(ctx); err == nil; key, err = q.Get(ctx) {
				ns, name, _ := cache.SplitMetaNamespaceKey(key)
				if pod, err := lister.Namespace(ns).Get(name); err == nil {
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

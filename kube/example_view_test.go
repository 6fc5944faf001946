package kube_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// PodView is what a controller that places pods on nodes reads of a pod:
// its identity and labels (kube.ViewMeta), its node, its containers'
// names and images, and its phase. Nothing else is decoded or kept.
type PodView struct {
	kube.ViewMeta
	NodeName   string          `kube:"spec.nodeName"`
	Containers []ContainerView `kube:"spec.containers"`
	Phase      corev1.PodPhase `kube:"status.phase"`
}

// ContainerView is one container of a PodView; its paths are relative to
// the container.
type ContainerView struct {
	Name  string `kube:"name"`
	Image string `kube:"image"`
}

// A view is checked against the full type when it is built: a path that
// does not exist in corev1.Pod is an error naming the field and the path,
// before any request.
func ExampleView() {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"} // View makes no request itself
	if _, err := kube.View[*PodView, *corev1.Pod](cfg, kube.SourceOptions{}); err != nil {
		log.Fatal(err)
	}
	type typo struct {
		kube.ViewMeta
		Node string `kube:"spec.node"`
	}
	_, err := kube.View[*typo, *corev1.Pod](cfg, kube.SourceOptions{})
	fmt.Println(errors.Is(err, kube.ErrInvalidView))
	// Output: true
}

// A factory's view informer, with a lister and a handler of the view
// type. (It needs a cluster, so it has no checked output.)
func ExampleViewInformer() {
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
	pods, err := kube.ViewInformer[*PodView, *corev1.Pod](f, kube.InformerOptions[*PodView]{
		Selection: kube.Selection{Namespace: "web"},
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = pods.AddHandler(informer.HandlerFuncs[*PodView]{
		UpdateFunc: func(old, cur *PodView) {
			if old.NodeName == "" && cur.NodeName != "" {
				fmt.Println(cur.Name, "scheduled on", cur.NodeName)
			}
		},
	}, informer.HandlerOptions{})
	if err != nil {
		log.Fatal(err)
	}
	f.Start(ctx)
	f.WaitForCacheSync(ctx)
	lister := informer.NewLister(pods.Cache())
	running, err := lister.Namespace("web").List(nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(running), "pods")
}

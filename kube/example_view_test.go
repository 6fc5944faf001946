package kube_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// PodView is what a controller that places pods on nodes reads of a pod:
// its identity and labels (ViewOf holds a kube.ViewMeta), its node, its
// containers' names and images, and its phase. Nothing else is decoded or
// kept.
type PodView struct {
	kube.ViewOf[*corev1.Pod]
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

// A view is checked against the full type before anything is made: a
// path that does not exist in corev1.Pod is an error naming the field and
// the path, before any request.
func ExampleViewOf() {
	ctx := context.Background()
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"} // a view of a built-in type makes no request here
	if _, err := kube.Source[*PodView](ctx, cfg, kube.SourceOptions{}); err != nil {
		log.Fatal(err)
	}
	type typo struct {
		kube.ViewOf[*corev1.Pod]
		Node string `kube:"spec.node"`
	}
	_, err := kube.Source[*typo](ctx, cfg, kube.SourceOptions{})
	fmt.Println(errors.Is(err, kube.ErrInvalidView))
	// Output: true
}

// A factory's informer of a view type, with a lister and a handler of the
// view type. (It needs a cluster, so it has no checked output.)
func ExampleInformer_view() {
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
	pods, _, err := kube.Informer(ctx, f, kube.InformerOptions[*PodView]{
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

// WidgetView is a view of a custom resource: it embeds kube.ViewMeta, and
// the options name the resource, whose CustomResourceDefinition's schema
// the view is checked against.
type WidgetView struct {
	kube.ViewMeta
	Size  int64 `kube:"spec.size"`
	Ready bool  `kube:"status.ready"`
}

// A factory's informer of a view of a custom resource. (It needs a
// cluster, so it has no checked output.)
func ExampleInformer_customResourceView() {
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
	res, err := kube.Resolve(ctx, cfg, "widgets.example.com")
	if err != nil {
		log.Fatal(err)
	}
	widgets, _, err := kube.Informer(ctx, f, kube.InformerOptions[*WidgetView]{Resource: res})
	if err != nil {
		log.Fatal(err) // errors.Is(err, kube.ErrNoSchema): no CustomResourceDefinition
	}
	f.Start(ctx)
	if widgets.WaitForCacheSync(ctx) {
		for _, w := range widgets.Cache().List() {
			fmt.Println(w.Name, w.Size, w.Ready)
		}
	}
}

// A view holds its labels as kube.Labels: sorted pairs read with Get,
// matched by selectors as they are.
func ExampleLabels() {
	l := kube.LabelsOf(map[string]string{"tier": "front", "app": "web"})
	sel, err := labels.Parse("app=web,tier in (front, back)")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(l.Get("app"), l.Has("owner"), sel.Matches(l), l)
	// Output: web false true app=web,tier=front
}

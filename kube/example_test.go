package kube_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
)

// A typed source of pods in one namespace: list a page, then watch from it.
// (It needs a cluster, so it has no checked output.)
func ExampleTyped() {
	ctx := context.Background()
	cfg, err := kube.LoadConfig(kube.ConfigOptions{})
	if err != nil {
		log.Fatal(err)
	}
	pods, err := kube.Typed[*corev1.Pod](cfg, kube.SourceOptions{Selection: kube.Selection{Namespace: "default", LabelSelector: "app=web"}})
	if err != nil {
		log.Fatal(err)
	}
	page, err := pods.List(ctx, listwatch.Options{Limit: 500})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range page.Items {
		fmt.Println(p.Name, p.Status.Phase)
	}
	w, err := pods.Watch(ctx, listwatch.Options{ResourceVersion: page.ResourceVersion, AllowBookmarks: true})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	for {
		ev, err := w.Next()
		if errors.Is(err, io.EOF) {
			return // the server ended the watch; watch again from the last version
		}
		if err != nil {
			log.Fatal(err)
		}
		if ev.Type == listwatch.Error {
			log.Fatal(ev.Err) // errors.Is(ev.Err, listwatch.ErrExpired): list again
		}
		fmt.Println(ev.Type, ev.Object.Name, ev.ResourceVersion)
	}
}

// ResourceFor shows what Typed resolves from a Go type, without a server.
func ExampleResourceFor() {
	for _, get := range []func() (kube.Resource, error){
		kube.ResourceFor[*corev1.Pod],
		kube.ResourceFor[*corev1.Endpoints],
		kube.ResourceFor[*corev1.Node],
		kube.ResourceFor[*appsv1.Deployment],
	} {
		r, err := get()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.GVR.String(), r.Kind, r.Namespaced)
	}
	_, err := kube.ResourceFor[*corev1.Binding]()
	fmt.Println(err != nil)
	// Output:
	// /v1, Resource=pods Pod true
	// /v1, Resource=endpoints Endpoints true
	// /v1, Resource=nodes Node false
	// apps/v1, Resource=deployments Deployment true
	// true
}

// Resolve a name as a user types it, then watch that resource's metadata.
func ExampleResolve() {
	ctx := context.Background()
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: "/path/to/kubeconfig"})
	if err != nil {
		log.Fatal(err)
	}
	res, err := kube.Resolve(ctx, cfg, "deploy")
	if err != nil {
		log.Fatal(err)
	}
	md, err := kube.Metadata(cfg, res.GVR, kube.SourceOptions{})
	if err != nil {
		log.Fatal(err)
	}
	page, err := md.List(ctx, listwatch.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range page.Items {
		fmt.Println(m.Namespace, m.Name, m.Labels)
	}
}

// A dynamic source of a custom resource.
func ExampleDynamic() {
	cfg, err := kube.LoadConfig(kube.ConfigOptions{})
	if err != nil {
		log.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	widgets, err := kube.Dynamic(cfg, gvr, kube.SourceOptions{Selection: kube.Selection{Namespace: "team-a"}})
	if err != nil {
		log.Fatal(err)
	}
	page, err := widgets.List(context.Background(), listwatch.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range page.Items {
		fmt.Println(u.GetName(), u.Object["spec"])
	}
}

// LoadConfig with a --kubeconfig flag's value and a context.
func ExampleLoadConfig() {
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: "/home/me/.kube/staging", Context: "admin@staging"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Host)
}

package kube_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
)

// A source of pods in one namespace, by hand: list a page, then watch from
// it. (It needs a cluster, so it has no checked output.)
func ExampleSource() {
	ctx := context.Background()
	cfg, err := kube.LoadConfig(kube.ConfigOptions{})
	if err != nil {
		log.Fatal(err)
	}
	pods, err := kube.Source[*corev1.Pod](ctx, cfg, kube.SourceOptions{
		Selection: kube.Selection{Namespace: "default", LabelSelector: "app=web"},
	})
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

// A source of a custom resource's objects as unstructured ones: the type
// serves any resource, so the options name it.
func ExampleSource_unstructured() {
	ctx := context.Background()
	cfg, err := kube.LoadConfig(kube.ConfigOptions{})
	if err != nil {
		log.Fatal(err)
	}
	res, err := kube.Resolve(ctx, cfg, "widgets.example.com")
	if err != nil {
		log.Fatal(err)
	}
	widgets, err := kube.Source[*unstructured.Unstructured](ctx, cfg, kube.SourceOptions{
		Resource:  res,
		Selection: kube.Selection{Namespace: "team-a"},
	})
	if err != nil {
		log.Fatal(err)
	}
	page, err := widgets.List(ctx, listwatch.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range page.Items {
		fmt.Println(u.GetName(), u.Object["spec"])
	}
}

// The Key an informer is known by names its resource, selection and type
// the way kubectl would; the type argument alone says where objects come
// from, and a type that serves any resource needs the options to name one.
// Asking for informers makes no request.
func ExampleKey() {
	ctx := context.Background()
	f, err := kube.NewFactory(&rest.Config{Host: "https://127.0.0.1:6443"}, kube.FactoryOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Shutdown()
	_, pods, _ := kube.Informer(ctx, f, kube.InformerOptions[*corev1.Pod]{
		Selection: kube.Selection{Namespace: "shop", LabelSelector: "app=web"},
	})
	_, deploys, _ := kube.Informer(ctx, f, kube.InformerOptions[*appsv1.Deployment]{})
	_, nodes, _ := kube.Informer(ctx, f, kube.InformerOptions[*corev1.Node]{
		Selection: kube.Selection{Namespace: "shop"}, // nodes have no namespace
	})
	podsRes := kube.Resource{GVR: corev1.SchemeGroupVersion.WithResource("pods"), Kind: "Pod", Namespaced: true}
	_, meta, _ := kube.Informer(ctx, f, kube.InformerOptions[*metav1.PartialObjectMetadata]{
		Resource:  podsRes,
		Selection: kube.Selection{FieldSelector: "spec.nodeName=n1"},
	})
	fmt.Println(pods)
	fmt.Println(deploys)
	fmt.Println(nodes)
	fmt.Println(meta)
	_, _, err = kube.Informer(ctx, f, kube.InformerOptions[*unstructured.Unstructured]{})
	fmt.Println(err)
	// Output:
	// pods -n shop app=web
	// deployments.v1.apps
	// nodes
	// pods --field-selector spec.nodeName=n1 as metadata
	// kube: *unstructured.Unstructured serves any resource: set InformerOptions.Resource to the one to serve (Resolve gives it from a name)
}

// Resolve a name as a user types it, then list that resource's metadata.
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
	md, err := kube.Source[*metav1.PartialObjectMetadata](ctx, cfg, kube.SourceOptions{Resource: res})
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

// LoadConfig with a --kubeconfig flag's value and a context.
func ExampleLoadConfig() {
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: "/home/me/.kube/staging", Context: "admin@staging"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Host)
}

package kube_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// A first program: load the configuration, start a factory, get an
// informer of pods, and see the initial list in a handler. Here a fake
// kube-apiserver serving two pods stands in for a cluster (fakeCluster
// points $KUBECONFIG at it); the rest is the program of the README, as a
// newcomer writes it.
func Example() {
	defer fakeCluster()()

	ctx := context.Background()
	cfg, err := kube.LoadConfig(kube.ConfigOptions{}) // $KUBECONFIG, ~/.kube/config or in-cluster
	if err != nil {
		log.Fatal(err)
	}
	f, err := kube.NewFactory(cfg, kube.FactoryOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Shutdown() // stops every informer and waits for its goroutines

	// The type argument says what is cached and where it comes from.
	pods, key, err := kube.Informer(ctx, f, kube.InformerOptions[*corev1.Pod]{
		Selection: kube.Selection{Namespace: "default"},
	})
	if err != nil {
		log.Fatal(err)
	}
	reg, err := pods.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, initial bool) { // a *corev1.Pod: no type assertion
			fmt.Println("pod", p.Name, p.Status.Phase, "initial:", initial)
		},
	}, informer.HandlerOptions{})
	if err != nil {
		log.Fatal(err)
	}

	f.Start(ctx)
	if !f.WaitForCacheSync(ctx)[key] {
		log.Fatal("pods did not sync")
	}
	<-reg.Synced() // the handler has seen the initial list
	fmt.Println(key, "synced:", len(pods.Cache().List()), "pods")
	// Unordered output:
	// pod web-0 Running initial: true
	// pod web-1 Pending initial: true
	// pods -n default synced: 2 pods
}

// fakeCluster starts a kube-apiserver that serves two pods of namespace
// default (lists, and watches that stay open), points $KUBECONFIG at it,
// and returns what undoes both.
func fakeCluster() (stop func()) {
	pods := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-0", ResourceVersion: "5"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1", ResourceVersion: "6"}, Status: corev1.PodStatus{Phase: corev1.PodPending}},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces/default/pods" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "true" {
			_ = json.NewEncoder(w).Encode(corev1.PodList{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
				ListMeta: metav1.ListMeta{ResourceVersion: "6"}, Items: pods})
			return
		}
		enc := json.NewEncoder(w)
		if r.URL.Query().Get("sendInitialEvents") == "true" {
			for _, p := range pods {
				p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
				_ = enc.Encode(map[string]any{"type": "ADDED", "object": p})
			}
			end := corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{
				ResourceVersion: "6", Annotations: map[string]string{"k8s.io/initial-events-end": "true"}}}
			_ = enc.Encode(map[string]any{"type": "BOOKMARK", "object": end})
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	dir, err := os.MkdirTemp("", "kubeconfig")
	if err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(dir, "config")
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: fake, cluster: {server: " + srv.URL + "}}]\n" +
		"contexts: [{name: fake, context: {cluster: fake, user: me}}]\ncurrent-context: fake\nusers: [{name: me, user: {}}]\n"
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		log.Fatal(err)
	}
	old, had := os.LookupEnv("KUBECONFIG")
	os.Setenv("KUBECONFIG", path)
	return func() {
		if had {
			os.Setenv("KUBECONFIG", old)
		} else {
			os.Unsetenv("KUBECONFIG")
		}
		srv.CloseClientConnections()
		srv.Close()
		os.RemoveAll(dir)
	}
}

package testenv_test

import (
	"context"
	"fmt"
	"log"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/testenv"
)

// Start a control plane, make some objects, force a 410 and restart the apiserver. (Not run
// as a test: the first build of the binaries takes minutes.)
func ExampleStart() {
	ctx := context.Background()
	env, err := testenv.Start(ctx, testenv.Options{
		Build:             testenv.BuildOptions{Progress: os.Stderr},
		DisableWatchCache: true, // so that CompactEtcd makes old watches fail with 410
	})
	if err != nil {
		log.Fatal(err)
	}
	defer env.Stop()

	if err := env.CreateNamespace(ctx, "demo"); err != nil {
		log.Fatal(err)
	}
	if err := env.CreatePods(ctx, "demo", 1000, testenv.BulkOptions{}); err != nil {
		log.Fatal(err)
	}
	pods, err := env.Clientset().CoreV1().Pods("demo").List(ctx, metav1.ListOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(pods.Items), "pods; kubeconfig at", env.KubeconfigPath())

	if _, err := env.CompactEtcd(ctx); err != nil {
		log.Fatal(err)
	}
	if err := env.RestartAPIServer(ctx); err != nil {
		log.Fatal(err)
	}
}

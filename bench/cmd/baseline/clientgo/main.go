// Command clientgo is client-go's side of process-baseline-rss (see the
// baseline command): a process that makes an idle shared informer
// factory, then prints its resident set as JSON and exits.
package main

import (
	"fmt"
	"os"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/bench/cmd/baseline/idle"
)

func main() {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f := informers.NewSharedInformerFactory(cs, 0)
	defer f.Shutdown()
	if err := idle.Report(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

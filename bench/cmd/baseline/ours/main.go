// Command ours is kinformer's side of process-baseline-rss (see the
// baseline command): a process importing kube that makes an idle factory,
// then prints its resident set as JSON and exits.
package main

import (
	"fmt"
	"os"

	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/bench/cmd/baseline/idle"
	"github.com/kinformer/kinformer/kube"
)

func main() {
	f, err := kube.NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, kube.FactoryOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Shutdown()
	if err := idle.Report(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

package controller_test

import (
	"context"
	"log"
	"net/netip"
	"os/signal"
	"syscall"

	"github.com/kinformer/kinformer/examples/lbipam/controller"
	"github.com/kinformer/kinformer/kube"
)

// Run the controller against the cluster of the kubeconfig until Ctrl-C.
// (It needs a cluster, so it has no checked output.)
func ExampleNew() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg, err := kube.LoadConfig(kube.ConfigOptions{})
	if err != nil {
		log.Fatal(err)
	}
	c, err := controller.New(controller.Options{Config: cfg, Pool: netip.MustParsePrefix("198.51.100.0/24")})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Run(ctx); err != nil { // returns once every goroutine has exited
		log.Fatal(err)
	}
}

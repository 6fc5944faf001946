// Command lbipam is an example controller built on kinformer: it gives each
// Service of type LoadBalancer with spec.loadBalancerClass set to its class
// an address from a pool, and writes it to the Service's
// status.loadBalancer.ingress.
//
//	go run ./lbipam -pool 198.51.100.0/24            # from the examples module
//
// then create a Service of its class. The class must be set when the Service
// is created: the server refuses to change spec.loadBalancerClass afterwards
// (and `kubectl create service loadbalancer` cannot set it), so apply a
// manifest:
//
//	kubectl apply -f - <<'EOF'
//	apiVersion: v1
//	kind: Service
//	metadata:
//	  name: web
//	spec:
//	  type: LoadBalancer
//	  loadBalancerClass: example.kinformer.dev/lbipam
//	  selector:
//	    app: web
//	  ports:
//	  - port: 80
//	EOF
//	kubectl get service web -o jsonpath='{.status.loadBalancer.ingress[0].ip}'   # 198.51.100.1
//
// It reads the cluster from -kubeconfig, $KUBECONFIG or ~/.kube/config, and
// stops cleanly on Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"syscall"

	"github.com/kinformer/kinformer/examples/lbipam/controller"
	"github.com/kinformer/kinformer/kube"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, then ~/.kube/config)")
	pool := flag.String("pool", "198.51.100.0/24", "the prefix addresses are taken from")
	class := flag.String("class", controller.DefaultClass, "the spec.loadBalancerClass served")
	namespace := flag.String("namespace", "", "serve one namespace only (default: all)")
	workers := flag.Int("workers", 2, "reconciling goroutines")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *pool, *class, *namespace, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "lbipam:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, pool, class, namespace string, workers int) error {
	prefix, err := netip.ParsePrefix(pool)
	if err != nil {
		return fmt.Errorf("-pool: %w", err)
	}
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: kubeconfig})
	if err != nil {
		return err
	}
	c, err := controller.New(controller.Options{
		Config: cfg, Pool: prefix, Class: class, Namespace: namespace, Workers: workers,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		return err
	}
	return c.Run(ctx)
}

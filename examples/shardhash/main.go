// Command shardhash is an example of a sharded controller built on
// kinformer: run it several times and the replicas share the cluster's
// ConfigMaps by hash range of their uids, each stamping the ConfigMaps it
// owns with the SHA-256 of their data (annotation
// example.kinformer.dev/data-sha256). Replicas find each other through
// Leases in -lease-namespace; start or stop (or kill) replicas and the
// ranges move, each only after its new owner has synced it.
//
//	go run ./shardhash -addr 127.0.0.1:9100 &    # from the examples module
//	go run ./shardhash -addr 127.0.0.1:9101 &
//	curl -s 127.0.0.1:9100/debug/shard           # members, ranges assigned and owned, claims, counters
//	curl -s 127.0.0.1:9100/metrics | grep shard_ # shard_ranges_owned, shard_handoffs_total, shard_server_side ...
//	kubectl get leases -l shard.kinformer.io/group=shardhash -o custom-columns=NAME:.metadata.name,RANGES:.metadata.annotations.shard\.kinformer\.io/ranges
//
// With the apiserver's ShardedListAndWatch feature gate on (alpha in
// Kubernetes 1.36), each range's list and watch carries that range's
// objects only; without it each replica drops the others itself (the log
// says which, once per range). It reads the cluster from -kubeconfig,
// $KUBECONFIG or ~/.kube/config, and on Ctrl-C hands its ranges over
// before it exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kinformer/kinformer/examples/shardhash/controller"
	"github.com/kinformer/kinformer/kube"
	kprom "github.com/kinformer/kinformer/metrics/prometheus"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "shardhash:", err)
		stop()
		os.Exit(1)
	}
}

// run parses args, serves status and metrics on -addr, and runs the
// controller until ctx is done. It prints "serving http://ADDR" once it
// listens.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("shardhash", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, then ~/.kube/config)")
	namespace := fs.String("namespace", "", "serve the ConfigMaps of one namespace only (default: all)")
	group := fs.String("group", "shardhash", "the replicas' group")
	leaseNS := fs.String("lease-namespace", "default", "the namespace of the replicas' Leases")
	identity := fs.String("identity", "", "this replica's name in the group (default: host name and a random suffix)")
	slots := fs.Int("slots", 0, "ranges the hash space is cut into; the same for every replica (default 16)")
	lease := fs.Duration("lease-duration", 0, "how long a replica's Lease stands without renewal (default 15s)")
	renew := fs.Duration("renew-period", 0, "how often a replica renews its Lease (default a fifth of -lease-duration)")
	poll := fs.Duration("poll-period", 0, "how often a replica reads the group's Leases (default -renew-period)")
	workers := fs.Int("workers", 2, "reconciling goroutines")
	dryRun := fs.Bool("dry-run", false, "compute the digests, write nothing")
	addr := fs.String("addr", "127.0.0.1:0", "where to serve /debug/shard and /metrics")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: *kubeconfig})
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	prov, err := kprom.NewProvider(kprom.Options{Registerer: reg})
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	c, err := controller.New(controller.Options{
		Config: cfg, Namespace: *namespace, Group: *group, LeaseNamespace: *leaseNS, Identity: *identity,
		Slots: *slots, LeaseDuration: *lease, RenewPeriod: *renew, PollPeriod: *poll,
		Workers: *workers, DryRun: *dryRun, Metrics: prov, Logger: logger,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/shard", c.StatusHandler())
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "serving http://%s\n", ln.Addr())

	runErr := c.Run(ctx)
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutCtx)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return runErr
}

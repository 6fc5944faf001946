package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	kprom "github.com/kinformer/kinformer/metrics/prometheus"
)

// metricsListenAddr completes addr: a missing host means loopback, so
// metrics and profiles are not exposed to the network unless asked for
// ("0.0.0.0:9090").
func metricsListenAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--metrics-addr %q: want HOST:PORT or :PORT: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// serveMetrics serves Prometheus metrics at /metrics and pprof at
// /debug/pprof/ on addr, and returns the provider informers report into and
// a stop function that shuts the server down and waits for it. With an
// empty addr it serves nothing and returns a nil provider.
func serveMetrics(addr string, errOut io.Writer) (provider, func(), error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	listen, err := metricsListenAddr(addr)
	if err != nil {
		return nil, nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	provider, err := kprom.NewProvider(kprom.Options{Registerer: reg, Namespace: "kinformer"})
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	// Owned by the stop function below, which shuts the server down and
	// waits for this goroutine.
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(errOut, "warning: metrics server: %v\n", err)
		}
	})
	fmt.Fprintf(errOut, "serving metrics on http://%s/metrics and profiles on http://%s/debug/pprof/\n", ln.Addr(), ln.Addr())
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
		wg.Wait()
	}
	return provider, stop, nil
}

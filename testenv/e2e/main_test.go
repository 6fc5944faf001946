// Package e2e_test runs kinformer's informers, fed by its kube sources,
// against the real local control plane of package testenv: etcd and a
// kube-apiserver running as processes. Every scenario ends by comparing the
// informer's cache with a fresh list from the server, object for object.
//
// Faults are real (etcd compaction, an apiserver restart, a closed port);
// when a scenario needs to hold a watch back while the world changes, it
// wraps the kube source in a probe (probe_test.go) that delays
// reconnection, the way a network partition would.
package e2e_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/testenv"
)

// env is the control plane every test shares, started by TestMain. Its
// watch cache is on (as in production) except for config maps, which etcd
// serves directly so that a compaction turns an old watch into 410 Gone.
// Each test works in namespaces of its own; tests that stop the apiserver
// start it again before they return.
var env *testenv.Env

// uncachedResource is the resource whose watch cache is off.
const uncachedResource = "configmaps"

type withEnv struct{ m *testing.M }

func (w withEnv) Run() int {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	bins, err := testenv.Build(ctx, testenv.BuildOptions{Progress: os.Stderr})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build control plane:", err)
		return 1
	}
	env, err = testenv.Start(context.Background(), testenv.Options{
		Binaries:       bins,
		APIServerFlags: []string{"--watch-cache-sizes=" + uncachedResource + "#0"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start control plane:", err)
		return 1
	}
	code := w.m.Run()
	// Sources made from env's config share client-go's cached transport;
	// drop its idle connections so none outlives the run.
	closeIdle(env.RESTConfig())
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stop control plane:", err)
		code = 1
	}
	return code
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(withEnv{m})
}

// closeIdle closes the idle connections of the transport client-go shares
// between configs equal to cfg.
func closeIdle(cfg *rest.Config) {
	if c, err := rest.HTTPClientFor(cfg); err == nil && c.Transport != nil {
		utilnet.CloseIdleConnectionsFor(c.Transport)
	}
}

// namespaces numbers the namespaces tests create, so that a test run more
// than once (-count) gets a fresh one each time.
var namespaces atomic.Int64

// namespace creates a namespace for one test, named prefix and a number. It
// is left in place: no controller would finalize its deletion, and the Env
// goes away at the end.
func namespace(t *testing.T, prefix string) string {
	t.Helper()
	name := prefix + "-" + strconv.FormatInt(namespaces.Add(1), 10)
	if err := env.CreateNamespace(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	return name
}

// Package sharding_test pins kinformer's sharding (package shard, and the
// Shard of a kube source) to a real kube-apiserver's: the same objects in
// every shard, range boundaries included, with the apiserver's
// ShardedListAndWatch feature gate on (the server filters) and off (the
// source filters).
package sharding_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/testenv"
)

// gate is the apiserver's feature gate for sharded list and watch.
const gate = "ShardedListAndWatch"

var (
	bins testenv.Binaries
	// envs are the control planes started so far, by gate state; each is
	// started by the first test that needs it and stopped by TestMain.
	envsMu sync.Mutex
	envs   = map[bool]*testenv.Env{}
)

// envWithGate returns the control plane whose apiserver has the gate on or
// off, starting it on first use.
func envWithGate(t *testing.T, on bool) *testenv.Env {
	t.Helper()
	envsMu.Lock()
	defer envsMu.Unlock()
	if e := envs[on]; e != nil {
		return e
	}
	e, err := testenv.Start(context.Background(), testenv.Options{Binaries: bins, FeatureGates: map[string]bool{gate: on}})
	if err != nil {
		t.Fatalf("start control plane (%s=%v): %v", gate, on, err)
	}
	envs[on] = e
	return e
}

type withEnvs struct{ m *testing.M }

func (w withEnvs) Run() int {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	var err error
	bins, err = testenv.Build(ctx, testenv.BuildOptions{Progress: os.Stderr})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sharding: build control plane:", err)
		return 1
	}
	code := w.m.Run()
	for _, e := range envs {
		closeIdle(e.RESTConfig())
		if err := e.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "sharding: stop control plane:", err)
			code = 1
		}
	}
	return code
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(withEnvs{m})
}

// closeIdle closes the idle connections of the transport client-go shares
// between configs equal to cfg.
func closeIdle(cfg *rest.Config) {
	if c, err := rest.HTTPClientFor(cfg); err == nil && c.Transport != nil {
		utilnet.CloseIdleConnectionsFor(c.Transport)
	}
}

package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if id := os.Getenv(replicaEnv); id != "" { // a replica the test started
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		err := replica(ctx, id)
		stop()
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// The example on a local control plane: three replicas stamp every config
// map, each its share; after m2's SIGKILL, m0 and m1 stamp them all.
func TestShardsExample(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(t.Context(), Options{Objects: 60, Lease: 4 * time.Second, Self: self,
		Args: []string{"-test.run=^$"}, Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m0", "m1", "m2"} {
		if res.Shared[id] == 0 {
			t.Errorf("with three replicas, %s stamped nothing: %v", id, res.Shared)
		}
	}
	if n := res.AfterKill["m0"] + res.AfterKill["m1"]; n != 60 || len(res.AfterKill) != 2 {
		t.Errorf("after the kill: %v, want m0 and m1 alone with 60", res.AfterKill)
	}
	t.Logf("shared %v; %v after the kill: %v", res.Shared, res.Takeover, res.AfterKill)
}

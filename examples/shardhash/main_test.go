package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// replicaEnv, set in the environment of a process the tests start from
// their own binary, makes it a replica: it runs the command with the
// arguments in replicaArgsEnv (a JSON list) instead of the tests.
const (
	replicaEnv     = "SHARDHASH_TEST_REPLICA"
	replicaArgsEnv = "SHARDHASH_TEST_ARGS"
)

func TestMain(m *testing.M) {
	if os.Getenv(replicaEnv) == "1" {
		var args []string
		if err := json.Unmarshal([]byte(os.Getenv(replicaArgsEnv)), &args); err != nil {
			fmt.Fprintln(os.Stderr, "replica args:", err)
			os.Exit(2)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, args, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "shardhash:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if cliDir != "" {
		_ = os.RemoveAll(cliDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func TestRunRejectsBadFlagsBeforeServing(t *testing.T) {
	if err := run(t.Context(), []string{"-no-such-flag"}, os.Stdout, devNull{}); err == nil {
		t.Error("an unknown flag was accepted")
	}
	if err := run(t.Context(), []string{"-kubeconfig", t.TempDir() + "/missing"}, os.Stdout, devNull{}); err == nil {
		t.Error("a missing kubeconfig was accepted")
	}
}

type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }

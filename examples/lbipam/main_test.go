package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRunRejectsBadFlagsBeforeTouchingACluster(t *testing.T) {
	err := run(context.Background(), "", "not-a-prefix", "c", "", 1)
	if err == nil || !strings.Contains(err.Error(), "-pool") {
		t.Errorf("bad pool: %v", err)
	}
	err = run(context.Background(), filepath.Join(t.TempDir(), "missing"), "10.0.0.0/24", "c", "", 1)
	if err == nil {
		t.Error("a missing kubeconfig was accepted")
	}
}

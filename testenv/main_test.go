package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// shared is the control plane most tests of this package use, started once by TestMain
// (watch cache on, default flags). Tests that stop or restart its apiserver restore it before
// they return; tests that need other options start their own Env.
var shared *Env

// buildTimeout bounds building the binaries when TestMain finds none cached. `make test`
// builds them before running tests, so a test run normally finds them.
const buildTimeout = 40 * time.Minute

// withSharedEnv runs the tests between starting and stopping the shared control plane, so
// goleak.VerifyTestMain checks for leaks after Stop has reaped everything.
type withSharedEnv struct{ m *testing.M }

func (w withSharedEnv) Run() int {
	buildCtx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	bins, err := Build(buildCtx, BuildOptions{Progress: os.Stderr})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv: build control plane:", err)
		return 1
	}
	start := time.Now()
	env, err := Start(context.Background(), Options{Binaries: bins})
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv: start control plane:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "testenv: control plane started in %s\n", time.Since(start).Round(time.Millisecond))
	shared = env
	code := w.m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv: stop control plane:", err)
		code = 1
	}
	return code
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(withSharedEnv{m})
}

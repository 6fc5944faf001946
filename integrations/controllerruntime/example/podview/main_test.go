package podview

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kinformer/kinformer/testenv"
)

var env *testenv.Env

type withEnv struct{ m *testing.M }

func (w withEnv) Run() int {
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	bins, err := testenv.Build(ctx, testenv.BuildOptions{Progress: os.Stderr})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "podview: build control plane:", err)
		return 1
	}
	if env, err = testenv.Start(context.Background(), testenv.Options{Binaries: bins}); err != nil {
		fmt.Fprintln(os.Stderr, "podview: start control plane:", err)
		return 1
	}
	code := w.m.Run()
	if c, err := rest.HTTPClientFor(env.RESTConfig()); err == nil && c.Transport != nil {
		utilnet.CloseIdleConnectionsFor(c.Transport)
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "podview: stop control plane:", err)
		code = 1
	}
	return code
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(withEnv{m})
}

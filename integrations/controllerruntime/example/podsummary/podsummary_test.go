package podsummary

import (
	"context"
	"fmt"
	"maps"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kinformer/kinformer/integrations/controllerruntime"
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
		fmt.Fprintln(os.Stderr, "podsummary: build control plane:", err)
		return 1
	}
	if env, err = testenv.Start(context.Background(), testenv.Options{Binaries: bins}); err != nil {
		fmt.Fprintln(os.Stderr, "podsummary: start control plane:", err)
		return 1
	}
	code := w.m.Run()
	if c, err := rest.HTTPClientFor(env.RESTConfig()); err == nil && c.Transport != nil {
		utilnet.CloseIdleConnectionsFor(c.Transport)
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "podsummary: stop control plane:", err)
		code = 1
	}
	return code
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(withEnv{m})
}

// TestSameReconcilesOnBothCaches runs the unchanged reconciler on
// controller-runtime's default cache, then on kinformer's, over the same
// pods, and requires the same summary for every app.
func TestSameReconcilesOnBothCaches(t *testing.T) {
	const pods = 300
	if err := Populate(t.Context(), env.Clientset(), "same", pods); err != nil {
		t.Fatal(err)
	}
	// This test's pods are the only pods of its control plane.
	cfg := env.RESTConfig()
	apps := pods / PodsPerApp
	reference, err := Run(t.Context(), cfg, nil, apps)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Run(t.Context(), cfg, controllerruntime.New, apps)
	if err != nil {
		t.Fatal(err)
	}
	if len(ours.Summaries) != apps {
		t.Errorf("kinformer's cache: %d apps reconciled, want %d", len(ours.Summaries), apps)
	}
	if !maps.Equal(reference.Summaries, ours.Summaries) {
		for k, v := range reference.Summaries {
			if ours.Summaries[k] != v {
				t.Errorf("%s: controller-runtime saw %q, kinformer %q", k, v, ours.Summaries[k])
			}
		}
	}
}

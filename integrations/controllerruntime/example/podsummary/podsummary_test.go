package podsummary

import (
	"maps"
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kinformer/kinformer/integrations/controllerruntime"
	"github.com/kinformer/kinformer/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	goleak.VerifyTestMain(testenv.Tests{M: m, Name: "podsummary", Env: &env})
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

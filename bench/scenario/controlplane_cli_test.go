package scenario

import (
	"os"
	"testing"

	"github.com/kinformer/kinformer/testenv"
)

// TestControlPlaneCLIPairSeesEveryPod runs the command-against-library
// pair of scenario 7 once at a tiny size: the built kinformer command must
// print a name for every pod, and the library's metadata informer cache
// them all. No timing or memory is asserted.
func TestControlPlaneCLIPairSeesEveryPod(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and builds the command")
	}
	const pods = 30
	env, err := testenv.Start(t.Context(), testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	if err := createRealisticPods(t.Context(), env.Clientset(), pods); err != nil {
		t.Fatal(err)
	}
	reports, err := runCLIPair(t.Context(), ControlPlaneOptions{Count: 1, Settle: -1},
		[]string{os.Args[0], "-test.run=^TestControlPlaneChild$"}, env.KubeconfigPath(), pods, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 2 || len(reports[0].Ours.Runs) != 1 || len(reports[0].ClientGo.Runs) != 1 {
		t.Fatalf("reports %+v", reports)
	}
}

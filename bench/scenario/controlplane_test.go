package scenario

import (
	"encoding/json"
	"os"
	"os/exec"
	"testing"

	"github.com/kinformer/kinformer/testenv"
)

// TestControlPlaneChild is the child process of
// TestControlPlaneSidesSyncTheSamePods: it does nothing unless
// ChildSideEnv is set.
func TestControlPlaneChild(t *testing.T) {
	if os.Getenv(ChildSideEnv) == "" {
		t.Skip("only runs as the child of TestControlPlaneSidesSyncTheSamePods")
	}
	if _, err := RunChild(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Exit now: the child's idle HTTP connections are not this test's
	// business, and goleak would see them.
	os.Exit(0)
}

// TestControlPlaneSidesSyncTheSamePods runs scenario 7 at a tiny size: a
// real control plane with 30 realistic pods, each side synced in its own
// process, both caches identical. No timing or memory is asserted.
func TestControlPlaneSidesSyncTheSamePods(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
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
	digests := map[Side]string{}
	for _, side := range []Side{Ours, ClientGo, OursShared} {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestControlPlaneChild$")
		cmd.Env = append(os.Environ(),
			ChildSideEnv+"="+string(side),
			ChildKubeconfigEnv+"="+env.KubeconfigPath(),
			ChildPodsEnv+"=30")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s child: %v\n%s", side, err, out)
		}
		var res ChildResult
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%s child output %q: %v", side, out, err)
		}
		digests[side] = res.Digest
		if res.PeakRSSKB <= 0 {
			t.Errorf("%s child reported no peak RSS", side)
		}
	}
	if digests[Ours] != digests[ClientGo] || digests[OursShared] != digests[ClientGo] {
		t.Fatalf("caches differ: ours %s, ours with shared parts %s, client-go %s", digests[Ours], digests[OursShared], digests[ClientGo])
	}
	t.Logf("both sides: %s", digests[Ours])
}

package scenario

import (
	"os"
	"testing"
)

// memoryTestEnv=1 runs TestMemoryScenariosRunEverySide, which starts two
// control planes and restarts an apiserver (about 20 s): it is kept out of
// the default test run, which only runs the memory scenarios' helpers.
const memoryTestEnv = "KINFORMER_BENCH_MEMORY_TEST"

// TestMemoryScenariosRunEverySide runs the memory scenarios at a tiny
// size, once per side: every side of the sync half caches the same pods
// (the floor reads as many), and both sides of the relist half relist them
// after the forced relist. No timing or memory is asserted.
func TestMemoryScenariosRunEverySide(t *testing.T) {
	if os.Getenv(memoryTestEnv) != "1" || testing.Short() {
		t.Skipf("starts two control planes; set %s=1 to run", memoryTestEnv)
	}
	reports, err := RunMemory(t.Context(), MemoryOptions{
		Pods: 30, Count: 1, Settle: -1, Progress: t.Logf,
		Child: []string{os.Args[0], "-test.run=^TestControlPlaneChild$"},
	})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]Report{}
	for _, r := range reports {
		names[r.Name] = r
		if len(r.Ours.Runs) != 1 || len(r.ClientGo.Runs) != 1 {
			t.Errorf("%s: %d and %d runs, want 1 each", r.Name, len(r.Ours.Runs), len(r.ClientGo.Runs))
		}
	}
	for _, name := range []string{"sync-floor", "sync-vs-floor", "heap-per-pod-full", "heap-per-pod-nomf", "relist-peak-heap", "relist-peak-rss", "relist-peak-changed-heap", "relist-peak-changed-rss"} {
		if _, ok := names[name]; !ok {
			t.Errorf("no %s line", name)
		}
	}
	if r := names["relist-peak-rss"]; r.Ours.Median <= 0 || r.ClientGo.Median <= 0 {
		t.Errorf("relist-peak-rss %+v", r)
	}
}

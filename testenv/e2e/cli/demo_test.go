package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDemoShowsCachesAndCleansUp runs `make demo` with DEMO_SECONDS=6 (or,
// while the Makefile's demo target does not run cmd/demo yet, the demo
// binary it would run): it must exit 0 having shown non-zero caches of pods
// and configmaps, and leave no process and no temporary file behind.
func TestDemoShowsCachesAndCleansUp(t *testing.T) {
	tmp := t.TempDir() // the demo's TMPDIR: its control plane and binaries go there
	env := []string{"DEMO_SECONDS=6", "TMPDIR=" + tmp}
	var d *running
	if mk, err := exec.LookPath("make"); err == nil && makefileRunsDemo(t) {
		t.Log("running make demo")
		d = startIn(t, repo, env, mk, "-s", "demo")
	} else {
		t.Log("the Makefile's demo target does not run cmd/demo (or there is no make): running the demo binary")
		d = startIn(t, filepath.Join(repo, "testenv"), env, buildDemo(t))
	}
	ctx := within(t, 10*time.Minute)
	if code := d.wait(ctx, t); code != 0 {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", code, d.stdout, d.stderr)
	}
	t.Logf("demo output:\n%s", d.stdout)

	maxObjects := map[string]int{}
	for _, line := range d.stdout.snapshot() {
		kv := keyValues(line)
		if kv["synced"] != "true" {
			continue
		}
		n, _ := strconv.Atoi(kv["objects"])
		res := kv["resource"]
		maxObjects[res] = max(maxObjects[res], n)
	}
	for _, res := range []string{"pods", "configmaps"} {
		if maxObjects[res] == 0 {
			t.Errorf("the demo never showed a non-zero cache of %s: %v", res, maxObjects)
		}
	}
	if !strings.Contains(d.stdout.String(), "demo: done") {
		t.Errorf("the demo did not say it was done")
	}

	checkCleanedUp(t, tmp)
}

// makefileRunsDemo reports whether the repository's Makefile has a demo
// target that runs testenv/cmd/demo.
func makefileRunsDemo(t *testing.T) bool {
	b, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	_, recipe, ok := strings.Cut(string(b), "\ndemo:")
	if !ok {
		return false
	}
	if next := strings.Index(recipe, "\n\n"); next >= 0 {
		recipe = recipe[:next]
	}
	return strings.Contains(recipe, "cmd/demo")
}

// TestDemoStopsCleanlyOnInterrupt is Ctrl-C in the middle of the demo.
func TestDemoStopsCleanlyOnInterrupt(t *testing.T) {
	demo := buildDemo(t)
	tmp := t.TempDir()
	d := startIn(t, filepath.Join(repo, "testenv"), []string{"DEMO_SECONDS=600", "TMPDIR=" + tmp}, demo)
	ctx := within(t, 10*time.Minute)
	d.stdout.waitFor(ctx, t, 0, "a non-zero pod cache", func(l string) bool {
		kv := keyValues(l)
		n, _ := strconv.Atoi(kv["objects"])
		return kv["resource"] == "pods" && kv["synced"] == "true" && n > 0
	})
	if code := d.interrupt(ctx, t); code != 0 {
		t.Fatalf("demo exit %d after Ctrl-C\nstdout:\n%s\nstderr:\n%s", code, d.stdout, d.stderr)
	}
	if !strings.Contains(d.stdout.String(), "demo: done") {
		t.Errorf("the demo did not say it was done:\n%s", d.stdout)
	}
	checkCleanedUp(t, tmp)
}

var (
	demoOnce sync.Once
	demoBin  string
	demoErr  error
)

// buildDemo builds testenv/cmd/demo once per test binary.
func buildDemo(t *testing.T) string {
	t.Helper()
	demoOnce.Do(func() {
		demoBin = filepath.Join(binDir, "demo")
		demoErr = goBuild(filepath.Join(repo, "testenv"), demoBin, "./cmd/demo")
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoBin
}

// checkCleanedUp fails if anything is left in the demo's TMPDIR, or any
// process mentions it.
func checkCleanedUp(t *testing.T, tmp string) {
	t.Helper()
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left behind in TMPDIR: %s", e.Name())
	}
	if procs := processesMentioning(t, tmp); len(procs) > 0 {
		t.Errorf("processes left running: %q", procs)
	}
}

// processesMentioning lists the command lines of running processes that
// mention s (the control plane's data directories are under the demo's
// TMPDIR).
func processesMentioning(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to look for processes: %v", err)
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, s) {
			out = append(out, cmd)
		}
	}
	return out
}

package cli_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStatsSaysOnceThatTheServerIsGoneThenThatItIsBack stops the shared
// apiserver under a running `kinformer stats`: the outage must be told once,
// in one short line that names neither the resource nor a URL path, however
// many retries fail, then the reconnection.
func TestStatsSaysOnceThatTheServerIsGoneThenThatItIsBack(t *testing.T) {
	ns := namespace(t, "cli-outage")
	createConfigMap(t, ns, "one", nil, nil)
	s := start(t, []string{"KUBECONFIG=" + env.KubeconfigPath()}, kinformerBin, "stats", "cm,pods", "-n", ns, "--interval", "200ms")
	ctx := within(t, 3*time.Minute)
	synced := s.stdout.waitFor(ctx, t, 0, "both informers synced", func(l string) bool {
		return keyValues(l)["synced"] == "true" && keyValues(l)["resource"] == "pods"
	})

	if err := env.StopAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = env.StartAPIServer(t.Context())
		}
	})
	s.stderr.waitFor(ctx, t, 0, "the outage", func(l string) bool { return strings.Contains(l, "unreachable") })
	// Wait for several failed retries of each informer (their errors count
	// up) before the server comes back.
	errs := func(l string) int { n, _ := strconv.Atoi(keyValues(l)["errors"]); return n }
	for _, res := range []string{"configmaps", "pods"} {
		s.stdout.waitFor(ctx, t, synced, res+" failing three times", func(l string) bool {
			return keyValues(l)["resource"] == res && errs(l) >= 3
		})
	}
	if err := env.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	s.stderr.waitFor(ctx, t, 0, "the reconnection", func(l string) bool { return strings.Contains(l, "reconnected to") })

	var outage []string
	for _, l := range s.stderr.snapshot() {
		if strings.Contains(l, "unreachable") {
			outage = append(outage, l)
		}
	}
	if len(outage) != 1 {
		t.Errorf("the outage was told %d times:\n%s", len(outage), s.stderr)
	}
	want := regexp.MustCompile(`^\d\d:\d\d:\d\d server https://127\.0\.0\.1:\d+ unreachable \(connection refused\); (next try in [\d.]+m?s(, at \d\d:\d\d:\d\d)?|retrying)$`)
	for _, l := range outage {
		if !want.MatchString(l) {
			t.Errorf("outage line %q does not read like %s", l, want)
		}
	}
	if strings.Contains(s.stderr.String(), "/api/v1") || strings.Contains(s.stderr.String(), "warning:") {
		t.Errorf("stderr repeats URLs or per-retry warnings:\n%s", s.stderr)
	}
	if code := s.interrupt(ctx, t); code != 0 {
		t.Errorf("exit %d after Ctrl-C", code)
	}
	t.Logf("stderr:\n%s", s.stderr)
}

// TestControlPlaneFaultsByHand runs `controlplane up` and, from another
// process, the fault commands a person would type: the apiserver restarts
// and etcd compacts, and both processes say so.
func TestControlPlaneFaultsByHand(t *testing.T) {
	bin := filepath.Join(binDir, "controlplane")
	if err := goBuild(filepath.Join(repo, "testenv"), bin, "./cmd/controlplane"); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir() // up's TMPDIR: its data, sockets and kubeconfig go there
	kubeconfig := filepath.Join(tmp, "kubeconfig")
	up := start(t, []string{"TMPDIR=" + tmp}, bin, "up", "-kubeconfig", kubeconfig)
	ctx := within(t, 3*time.Minute)
	up.stdout.waitFor(ctx, t, 0, "the control plane ready", func(l string) bool { return strings.Contains(l, "press Ctrl-C to stop") })

	fault := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(baseEnv(), "KUBECONFIG="+kubeconfig, "TMPDIR="+tmp)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("controlplane %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := fault("restart-apiserver", "-down", "1s"); !strings.Contains(out, "apiserver stopped") || !strings.Contains(out, "apiserver ready again") {
		t.Errorf("restart-apiserver said:\n%s", out)
	}
	if r := kinformerWith(t, []string{"KUBECONFIG=" + kubeconfig}, "get", "ns", "-o", "name"); r.code != 0 {
		t.Errorf("the restarted apiserver does not serve: exit %d", r.code)
	}
	if out := fault("compact"); !regexp.MustCompile(`etcd compacted at revision \d+`).MatchString(out) {
		t.Errorf("compact said:\n%s", out)
	}
	up.stdout.waitFor(ctx, t, 0, "up logging the compaction", func(l string) bool { return strings.Contains(l, "etcd compacted") })
	if code := up.interrupt(ctx, t); code != 0 {
		t.Fatalf("up exit %d after Ctrl-C\nstdout:\n%s\nstderr:\n%s", code, up.stdout, up.stderr)
	}
	checkCleanedUp(t, tmp)
}

package goprogress

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// fakeGoEnv makes the test binary act as a go command that prints its arguments' lines
// to standard error and exits with status 1 if one of them is "fail".
const fakeGoEnv = "GOPROGRESS_FAKE_GO"

func TestMain(m *testing.M) {
	if os.Getenv(fakeGoEnv) == "1" {
		code := 0
		for _, a := range os.Args[1:] {
			if a == "fail" {
				code = 1
				continue
			}
			fmt.Fprintln(os.Stderr, a)
		}
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}

func TestIsPackageLineTellsPackagesFromMessages(t *testing.T) {
	for line, want := range map[string]bool{
		"k8s.io/kubernetes/pkg/api":          true,
		"net/http":                           true,
		"# k8s.io/kubernetes/pkg/x":          false,
		"go: downloading k8s.io/api v0.36.3": false,
		"pkg/x.go:12:3: undefined: y":        false,
		"":                                   false,
	} {
		if got := IsPackageLine(line); got != want {
			t.Errorf("IsPackageLine(%q) = %v, want %v", line, got, want)
		}
	}
}

// clock is a fake clock for the meter.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestMeterOnATerminalRedrawsOneLine(t *testing.T) {
	var out bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	yes := true
	m := New(&out, Options{Label: "compiling ./cmd/demo", Terminal: &yes, Now: c.now})
	m.Tick()
	m.Line("go: downloading k8s.io/api v0.36.3")
	m.Tick()
	m.SetTotal(400)
	for i := range 212 {
		m.Line(fmt.Sprintf("example.com/p%d", i))
	}
	c.t = c.t.Add(65 * time.Second)
	m.Tick()
	m.Line("# example.com/p3")
	m.Done("compiled")
	want := "\rcompiling ./cmd/demo: starting, 0s\x1b[K" +
		"\rcompiling ./cmd/demo: 1 module downloaded, 0s\x1b[K" +
		"\rcompiling ./cmd/demo: 212 of at most 400 packages compiled, 1m5s\x1b[K" +
		"\r\x1b[Kcompiling ./cmd/demo: compiled in 1m5s (212 packages compiled)\n"
	if out.String() != want {
		t.Errorf("drew\n%q\nwant\n%q", out.String(), want)
	}
	if got := m.Other(); len(got) != 1 || got[0] != "# example.com/p3" {
		t.Errorf("other lines %q", got)
	}
}

func TestMeterElsewherePrintsLinesAndHeartbeats(t *testing.T) {
	var out bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	no := false
	m := New(&out, Options{Label: "controlplane", Terminal: &no, Now: c.now})
	for i := range 450 {
		m.Line(fmt.Sprintf("example.com/p%d", i))
	}
	c.t = c.t.Add(10 * time.Second)
	m.Tick() // not quiet for long enough
	c.t = c.t.Add(quiet)
	m.Tick()
	want := "controlplane: 200 packages compiled, 0s elapsed\n" +
		"controlplane: 400 packages compiled, 0s elapsed\n" +
		"controlplane: 450 packages compiled (working), 30s elapsed\n"
	if out.String() != want {
		t.Errorf("printed\n%q\nwant\n%q", out.String(), want)
	}
}

func TestRunFeedsTheMeterAndReportsFailures(t *testing.T) {
	t.Setenv(fakeGoEnv, "1")
	var out bytes.Buffer
	no := false
	m := New(&out, Options{Label: "x", Terminal: &no})
	cmd := exec.CommandContext(t.Context(), os.Args[0], "example.com/a", "example.com/b", "go: downloading m v1")
	if err := Run(t.Context(), cmd, m); err != nil {
		t.Fatal(err)
	}
	m.Done("built")
	if !strings.HasPrefix(out.String(), "x: built in ") || !strings.HasSuffix(out.String(), "(2 packages compiled)\n") {
		t.Errorf("printed %q", out.String())
	}
	cmd = exec.CommandContext(t.Context(), os.Args[0], "example.com/c", "p.go:1:1: undefined: y", "fail")
	err := Run(t.Context(), cmd, m)
	if err == nil || !strings.Contains(err.Error(), "p.go:1:1: undefined: y") || strings.Contains(err.Error(), "example.com/c") {
		t.Errorf("failure: %v", err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(fmt.Errorf("stopped by the test"))
	cmd = exec.CommandContext(ctx, os.Args[0], "example.com/d")
	if err := Run(ctx, cmd, m); err == nil {
		t.Error("a cancelled run succeeded")
	}
}

func TestStartedReadsSecondsOrNanoseconds(t *testing.T) {
	t.Setenv(StartedEnv, "1763751731")
	if got := Started(); !got.Equal(time.Unix(1763751731, 0)) {
		t.Errorf("seconds: %v", got)
	}
	t.Setenv(StartedEnv, "1763751731000000042")
	if got := Started(); !got.Equal(time.Unix(1763751731, 42)) {
		t.Errorf("nanoseconds: %v", got)
	}
	t.Setenv(StartedEnv, "soon")
	if got := Started(); time.Since(got) > time.Minute {
		t.Errorf("garbage: %v, want about now", got)
	}
}

package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/kinformer/kinformer/testenv/internal/goprogress"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// ownBinDir gives the test a user cache of its own (where gorun keeps
// binaries), and the go command the build cache it has.
func ownBinDir(t *testing.T) {
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
}

func TestGorunCompilesWithProgressThenRunsTheProgram(t *testing.T) {
	t.Setenv(goprogress.StartedEnv, "")
	ownBinDir(t)
	var stdout, stderr bytes.Buffer
	code, err := run([]string{"./testdata/echo", "3", "x"}, nil, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if code != 3 || stdout.String() != "[3 x]\n" {
		t.Errorf("exit %d, printed %q", code, stdout.String())
	}
	if got := stderr.String(); !(strings.HasPrefix(got, "compiling ./testdata/echo: compiled in ") || strings.HasPrefix(got, "compiling ./testdata/echo: linked in ")) || strings.Count(got, "\n") != 1 {
		t.Errorf("progress %q, want one line saying how long compiling took", got)
	}

	stderr.Reset()
	code, err = run([]string{"./testdata/nothing-here"}, nil, &stdout, &stderr)
	if err == nil || code == 0 || !strings.Contains(err.Error(), "compiling ./testdata/nothing-here") {
		t.Errorf("a package that does not exist: exit %d, %v", code, err)
	}
}

// A second run of an unchanged package neither compiles nor links it
// again: the binary is kept in the user's cache, and gorun says it is up
// to date.
func TestGorunKeepsTheBinaryOfAnUnchangedPackage(t *testing.T) {
	t.Setenv(goprogress.StartedEnv, "")
	ownBinDir(t)
	var stdout, stderr bytes.Buffer
	if _, err := run([]string{"./testdata/echo", "0"}, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	code, err := run([]string{"./testdata/echo", "0", "again"}, nil, &stdout, &stderr)
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	if got := stderr.String(); !strings.HasPrefix(got, "compiling ./testdata/echo: up to date in ") || strings.Contains(got, "package") {
		t.Errorf("second run said %q, want up to date", got)
	}
}

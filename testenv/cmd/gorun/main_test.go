package main

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/kinformer/kinformer/testenv/internal/goprogress"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestGorunCompilesWithProgressThenRunsTheProgram(t *testing.T) {
	t.Setenv(goprogress.StartedEnv, "")
	var stdout, stderr bytes.Buffer
	code, err := run([]string{"./testdata/echo", "3", "x"}, nil, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if code != 3 || stdout.String() != "[3 x]\n" {
		t.Errorf("exit %d, printed %q", code, stdout.String())
	}
	if got := stderr.String(); !strings.HasPrefix(got, "compiling ./testdata/echo: compiled in ") || strings.Count(got, "\n") != 1 {
		t.Errorf("progress %q, want one line saying how long compiling took", got)
	}

	stderr.Reset()
	code, err = run([]string{"./testdata/nothing-here"}, nil, &stdout, &stderr)
	if err == nil || code == 0 || !strings.Contains(err.Error(), "compiling ./testdata/nothing-here") {
		t.Errorf("a package that does not exist: exit %d, %v", code, err)
	}
}

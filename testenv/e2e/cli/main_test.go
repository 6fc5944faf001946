// Package cli_test runs the kinformer command and the demo against the real
// local control plane: each test executes the built binary, as a person
// would, and parses what it prints.
package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kinformer/kinformer/testenv"
)

var (
	// env is the control plane the command tests share, started by
	// TestMain; each test works in namespaces of its own.
	env *testenv.Env
	// kinformerBin is the kinformer command, built by TestMain.
	kinformerBin string
	// binDir holds the binaries built by TestMain.
	binDir string
	// repo is the root of the kinformer repository.
	repo string
)

type withEnv struct{ m *testing.M }

func (w withEnv) Run() int {
	var err error
	repo, err = filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binDir, err = os.MkdirTemp("", "kinformer-e2e-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(binDir)
	kinformerBin = filepath.Join(binDir, "kinformer")
	if err := goBuild(repo, kinformerBin, "./cmd/kinformer"); err != nil {
		fmt.Fprintln(os.Stderr, "build kinformer:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	bins, err := testenv.Build(ctx, testenv.BuildOptions{Progress: os.Stderr})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "build control plane:", err)
		return 1
	}
	env, err = testenv.Start(context.Background(), testenv.Options{Binaries: bins})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start control plane:", err)
		return 1
	}
	code := w.m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop control plane:", err)
		code = 1
	}
	return code
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(withEnv{m})
}

func goBuild(dir, out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, b)
	}
	return nil
}

// result is what one run of the command did.
type result struct {
	stdout, stderr string
	code           int
}

// kinformer runs the command with args against the shared control plane
// and waits for it to exit (or ctx to end, which kills it).
func kinformer(t *testing.T, args ...string) result {
	t.Helper()
	return kinformerWith(t, []string{"KUBECONFIG=" + env.KubeconfigPath()}, args...)
}

func kinformerWith(t *testing.T, extraEnv []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kinformerBin, args...)
	cmd.Env = append(baseEnv(), extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("kinformer %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("kinformer %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	return r
}

// baseEnv is the process environment without anything that would point
// kinformer at another cluster.
func baseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "KUBERNETES_SERVICE_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// table parses a table printed by kinformer: a header line of upper-case
// column names, then rows, columns separated by runs of spaces (no cell
// has a space in it in the tables these tests read).
func table(t *testing.T, out string) (header []string, rows []map[string]string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 || lines[0] == "" {
		t.Fatalf("no table in %q", out)
	}
	header = strings.Fields(lines[0])
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != len(header) {
			t.Fatalf("row %q has %d cells, header %q has %d", l, len(f), lines[0], len(header))
		}
		row := map[string]string{}
		for i, h := range header {
			row[h] = f[i]
		}
		rows = append(rows, row)
	}
	return header, rows
}

// keyValues parses a line of key=value pairs.
func keyValues(line string) map[string]string {
	kv := map[string]string{}
	for _, f := range strings.Fields(line) {
		if k, v, ok := strings.Cut(f, "="); ok {
			kv[k] = v
		}
	}
	return kv
}

// namespace creates a namespace for one test.
func namespace(t *testing.T, name string) string {
	t.Helper()
	if err := env.CreateNamespace(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	return name
}

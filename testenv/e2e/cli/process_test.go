package cli_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// lines collects what a running process writes, line by line, for tests
// to wait on. It is an io.Writer safe for concurrent use.
type lines struct {
	mu      sync.Mutex
	partial string
	lines   []string
	// changed is signalled (capacity 1, never closed) after every write.
	changed chan struct{}
}

func newLines() *lines { return &lines{changed: make(chan struct{}, 1)} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	s := l.partial + string(p)
	parts := strings.Split(s, "\n")
	l.partial = parts[len(parts)-1]
	l.lines = append(l.lines, parts[:len(parts)-1]...)
	l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *lines) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func (l *lines) String() string { return strings.Join(l.snapshot(), "\n") }

// waitFor returns the index of the first line from index from on that
// satisfies match, waiting for it until ctx is done (a test failure).
func (l *lines) waitFor(ctx context.Context, t *testing.T, from int, what string, match func(string) bool) int {
	t.Helper()
	for {
		for i, line := range l.snapshot() {
			if i >= from && match(line) {
				return i
			}
		}
		select {
		case <-l.changed:
		case <-ctx.Done():
			t.Fatalf("no line with %s; output so far:\n%s", what, l)
		}
	}
}

// running is a kinformer (or demo) process a test talks to while it runs.
type running struct {
	cmd            *exec.Cmd
	stdout, stderr *lines
	exited         chan error
}

// start runs bin with args and env in the background; the test's cleanup
// kills it if the test has not waited for it.
func start(t *testing.T, env []string, bin string, args ...string) *running {
	t.Helper()
	return startIn(t, "", env, bin, args...)
}

// startIn is start in directory dir.
func startIn(t *testing.T, dir string, env []string, bin string, args ...string) *running {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(), env...)
	r := &running{cmd: cmd, stdout: newLines(), stderr: newLines(), exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Owned by the test: ends when the process exits, which stop or the
	// cleanup below brings about.
	go func() { r.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case err := <-r.exited:
			r.exited <- err
		default:
			_ = cmd.Process.Kill()
			<-r.exited
		}
	})
	return r
}

// interrupt sends SIGINT and returns the exit code, killing the process
// if it has not exited when ctx ends.
func (r *running) interrupt(ctx context.Context, t *testing.T) int {
	t.Helper()
	if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	return r.wait(ctx, t)
}

// wait returns the exit code once the process has exited.
func (r *running) wait(ctx context.Context, t *testing.T) int {
	t.Helper()
	var err error
	select {
	case err = <-r.exited:
		r.exited <- err // for the cleanup
	case <-ctx.Done():
		_ = r.cmd.Process.Kill()
		err = <-r.exited
		r.exited <- err
		t.Fatalf("process did not exit; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// within returns a context for one step of a test.
func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

package scenario

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// The control-plane scenarios run each measured side in a child process:
// the bench binary re-executed with environment variables saying what to
// do. A child prints any number of progress lines (not starting with "{")
// and then its result, a JSON object on one line. runChildJSON is the
// parent's half.

// childRun describes one child process.
type childRun struct {
	// args is the command line: the bench binary and any arguments.
	args []string
	// env is added to the parent's environment.
	env []string
	// onLine, when set, is called with every progress line the child
	// prints, as it prints it (a child can wait for the parent to act on
	// a line, for example to restart the apiserver). An error from it
	// kills the child and is returned.
	onLine func(line string) error
	// stdin, when set, is the child's standard input (an *os.File is
	// handed to the child as it is; the caller keeps and closes it).
	stdin io.Reader
	// killAboveKB, when set, is the RSS at which the parent kills the
	// child: a guard behind a child's own cap (ChildCapMBEnv), for when
	// the child cannot stop itself in time.
	killAboveKB int64
}

// runChildJSON runs r, decodes the last JSON line of its output into a new R,
// and returns it with the process's state (its CPU times and rusage).
// The child's standard error is the parent's.
func runChildJSON[R any](ctx context.Context, r childRun) (R, *os.ProcessState, error) {
	var res R
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.args[0], r.args[1:]...)
	cmd.Env = append(os.Environ(), r.env...)
	cmd.Stderr = os.Stderr
	cmd.Stdin = r.stdin
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, nil, err
	}
	if err := cmd.Start(); err != nil {
		return res, nil, fmt.Errorf("child: %w", err)
	}
	var killed atomic.Int64 // the RSS in KB at which the guard killed the child
	if r.killAboveKB > 0 {
		guardDone := make(chan struct{})
		defer func() { cancel(); <-guardDone }()
		go func() { // Exits when ctx ends (cancel is deferred above) or after the kill.
			defer close(guardDone)
			status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				if kb, ok := readStatusKB(status, "VmRSS"); ok && kb > r.killAboveKB {
					killed.Store(kb)
					cancel()
					return
				}
			}
		}()
	}
	var last []byte
	var lineErr error
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		switch {
		case len(line) == 0:
		case line[0] == '{':
			last = append(last[:0], line...)
		case r.onLine != nil && lineErr == nil:
			if lineErr = r.onLine(string(line)); lineErr != nil {
				cancel() // kills the child; the loop drains what it wrote
			}
		}
	}
	scanErr := sc.Err()
	waitErr := cmd.Wait()
	switch {
	case killed.Load() > 0:
		return res, cmd.ProcessState, fmt.Errorf("%w: killed at %.0f MB RSS, past the %.0f MB guard",
			ErrChildOverMemory, float64(killed.Load())/1024, float64(r.killAboveKB)/1024)
	case lineErr != nil:
		return res, cmd.ProcessState, lineErr
	case waitErr != nil:
		return res, cmd.ProcessState, fmt.Errorf("child: %w", waitErr)
	case scanErr != nil:
		return res, cmd.ProcessState, fmt.Errorf("child output: %w", scanErr)
	case last == nil:
		return res, cmd.ProcessState, fmt.Errorf("child printed no result")
	}
	if err := json.Unmarshal(last, &res); err != nil {
		return res, cmd.ProcessState, fmt.Errorf("child output %q: %w", last, err)
	}
	return res, cmd.ProcessState, nil
}

// ErrChildOverMemory: the parent killed a child whose RSS passed
// childRun.killAboveKB.
var ErrChildOverMemory = errors.New("child over its memory guard")

// childCommand is the command line of child processes: cmd, or this
// executable when cmd is empty.
func childCommand(cmd []string) ([]string, error) {
	if len(cmd) > 0 {
		return cmd, nil
	}
	self, err := os.Executable()
	return []string{self}, err
}

// childEnv returns the environment entries NAME=value of pairs (name,
// value, name, value, ...).
func childEnv(pairs ...string) []string {
	env := make([]string, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		env = append(env, pairs[i]+"="+pairs[i+1])
	}
	return env
}

// peakRSSMB is a child's peak RSS in MB: what it reported (its own VmHWM)
// or, where it could not, its rusage (which Linux starts at the parent's
// RSS; see timeProcess).
func peakRSSMB(reportedKB int64, ps *os.ProcessState) float64 {
	if reportedKB > 0 {
		return float64(reportedKB) / 1024
	}
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) / 1024 // Maxrss is in KB on Linux
	}
	return 0
}

// settle waits d before a child run (see ControlPlaneOptions.Settle);
// nothing when d is not positive.
func settle(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// say is a progress function that may be nil.
type sayFunc func(format string, args ...any)

func (s sayFunc) orNothing() sayFunc {
	if s == nil {
		return func(string, ...any) {}
	}
	return s
}

// alternating is the order of the sides of run i (from 0): sides as given
// on even runs, reversed on odd ones, so that drift in the machine's load
// hits every side alike.
func alternating(i int, sides []Side) []Side {
	if i%2 == 0 {
		return sides
	}
	out := make([]Side, len(sides))
	for j, s := range sides {
		out[len(sides)-1-j] = s
	}
	return out
}

// defaults sets the common options of the control-plane scenarios that
// are zero: pods to 20,000, count to defCount, settle to DefaultSettle.
func defaults(pods, count *int, defCount int, settle *time.Duration) {
	if *pods <= 0 {
		*pods = 20_000
	}
	if *count <= 0 {
		*count = defCount
	}
	if *settle == 0 {
		*settle = DefaultSettle
	}
}

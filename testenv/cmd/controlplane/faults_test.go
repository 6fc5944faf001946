package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeEnv records the faults asked of it.
type fakeEnv struct {
	mu    sync.Mutex
	calls []string
	fail  error
}

func (e *fakeEnv) record(s string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, s)
	return e.fail
}
func (e *fakeEnv) StopAPIServer(context.Context) error  { return e.record("stop") }
func (e *fakeEnv) StartAPIServer(context.Context) error { return e.record("start") }
func (e *fakeEnv) CompactEtcd(context.Context) (int64, error) {
	return 4711, e.record("compact")
}

func (e *fakeEnv) got() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.calls, " ")
}

func fixedNow() time.Time { return time.Date(2026, 11, 21, 19, 2, 11, 0, time.UTC) }

func TestFaultCommandsReachTheRunningControlPlane(t *testing.T) {
	env := &fakeEnv{}
	var log bytes.Buffer
	f := &faultRunner{env: env, log: &log, now: fixedNow}
	dir := t.TempDir()
	sock := filepath.Join(dir, controlSocketName)
	served, stop, err := serveFaults(t.Context(), f, []string{sock})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if len(served) != 1 || served[0] != sock {
		t.Fatalf("served %q", served)
	}
	// A second `up` on the same socket is refused.
	if _, _, err := serveFaults(t.Context(), f, []string{sock}); err == nil {
		t.Error("two control planes on one socket")
	}

	// The command finds the socket next to $KUBECONFIG.
	t.Setenv("KUBECONFIG", filepath.Join(dir, "kubeconfig"))
	for _, tc := range []struct {
		args  []string
		calls string
		says  []string
	}{
		{[]string{"restart-apiserver"}, "stop start", []string{"19:02:11 apiserver stopped", "apiserver ready again, 0s after it stopped"}},
		{[]string{"restart-apiserver", "-down", "10ms"}, "stop start", []string{"keeping it down for 10ms"}},
		{[]string{"stop-apiserver"}, "stop", []string{"clients get connection refused", "start-apiserver"}},
		{[]string{"start-apiserver", "-socket", sock}, "start", []string{"apiserver ready"}},
		{[]string{"compact"}, "compact", []string{"etcd compacted at revision 4711", "410 Gone", "restart-apiserver next"}},
	} {
		env.calls = nil
		var out, errOut bytes.Buffer
		if err := run(t.Context(), tc.args, &out, &errOut); err != nil {
			t.Errorf("%q: %v (%s)", tc.args, err, errOut.String())
			continue
		}
		if env.got() != tc.calls {
			t.Errorf("%q: called %q, want %q", tc.args, env.got(), tc.calls)
		}
		for _, w := range tc.says {
			if !strings.Contains(out.String(), w) || !strings.Contains(log.String(), w) {
				t.Errorf("%q: said %q (and up logged %q), want %q", tc.args, out.String(), log.String(), w)
			}
		}
	}

	env.fail = errors.New("apiserver did not become ready")
	var out bytes.Buffer
	if err := run(t.Context(), []string{"start-apiserver"}, &out, &out); err == nil || !strings.Contains(out.String(), "error: apiserver did not become ready") {
		t.Errorf("a failed fault: %v, said %q", err, out.String())
	}
}

func TestFaultCommandWithoutAControlPlaneSaysWhereItLooked(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", filepath.Join(dir, "kubeconfig"))
	if _, err := os.Stat(wellKnownSocket()); err == nil {
		t.Skipf("a control plane is running on this machine (%s)", wellKnownSocket())
	}
	var out bytes.Buffer
	err := run(t.Context(), []string{"compact"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, controlSocketName)) || !strings.Contains(err.Error(), "controlplane up") {
		t.Errorf("err %v", err)
	}
}

func TestFaultsTypedIntoUp(t *testing.T) {
	env := &fakeEnv{}
	var out bytes.Buffer
	f := &faultRunner{env: env, log: &out, now: fixedNow}
	readKeys(t.Context(), strings.NewReader("r\n\nc\nstop\nstart\nwhat\n"), f, &out)
	if got, want := env.got(), "stop start compact stop start"; got != want {
		t.Errorf("called %q, want %q", got, want)
	}
	if !strings.Contains(out.String(), "restart-apiserver (r)") {
		t.Errorf("an unknown word did not print the help:\n%s", out.String())
	}
}

package cli_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// silentServer accepts connections and never answers, and returns a
// kubeconfig pointing at it and a channel closed at the first connection.
func silentServer(t *testing.T) (kubeconfig string, connected <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan struct{})
	done := make(chan struct{})
	var conns []net.Conn
	go func() { // ends when the listener is closed
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if conns = append(conns, c); len(conns) == 1 {
				close(first)
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: silent, cluster: {server: "http://%s"}}]
contexts: [{name: silent, context: {cluster: silent, user: silent}}]
users: [{name: silent, user: {}}]
current-context: silent
`, ln.Addr())
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, first
}

// An interrupted get exits 130 (SIGINT) or 143 (SIGTERM) and says it was
// interrupted, so that `timeout 30 kinformer get … > f && use f` never
// takes an incomplete file for success; watch ends with 0, as it only
// ends when interrupted.
func TestInterruptedGetExitsNonZero(t *testing.T) {
	for _, tc := range []struct {
		args []string
		sig  syscall.Signal
		code int
	}{
		{[]string{"get", "pods"}, syscall.SIGINT, 130},
		{[]string{"get", "pods", "-o", "json"}, syscall.SIGTERM, 143},
		{[]string{"watch", "pods"}, syscall.SIGINT, 0},
	} {
		kubeconfig, connected := silentServer(t)
		r := start(t, nil, kinformerBin, append(tc.args, "--kubeconfig", kubeconfig)...)
		ctx := within(t, time.Minute)
		select {
		case <-connected:
		case <-ctx.Done():
			t.Fatalf("%v never connected", tc.args)
		}
		if err := r.cmd.Process.Signal(tc.sig); err != nil {
			t.Fatal(err)
		}
		if code := r.wait(ctx, t); code != tc.code {
			t.Errorf("%v, %v: exit %d, want %d; stderr:\n%s", tc.args, tc.sig, code, tc.code, r.stderr)
		}
		if tc.code != 0 && !strings.Contains(r.stderr.String(), "interrupted by") {
			t.Errorf("%v: stderr does not say it was interrupted:\n%s", tc.args, r.stderr)
		}
	}
}

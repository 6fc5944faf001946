package testenv

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestParallelCallsEveryIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 0}, {1, 0}, {7, 3}, {100, 0}, {5, 50}} {
		var mu sync.Mutex
		seen := make(map[int]int)
		err := Parallel(t.Context(), tc.n, tc.workers, func(_ context.Context, i int) error {
			mu.Lock()
			defer mu.Unlock()
			seen[i]++
			return nil
		})
		if err != nil {
			t.Fatalf("n=%d workers=%d: %v", tc.n, tc.workers, err)
		}
		if len(seen) != tc.n {
			t.Errorf("n=%d workers=%d: %d distinct indices called", tc.n, tc.workers, len(seen))
		}
		for i, c := range seen {
			if i < 0 || i >= tc.n || c != 1 {
				t.Errorf("n=%d workers=%d: index %d called %d times", tc.n, tc.workers, i, c)
			}
		}
	}
}

func TestParallelStopsAtFirstError(t *testing.T) {
	boom := errors.New("boom")
	var mu sync.Mutex
	calls := 0
	err := Parallel(t.Context(), 1000, 1, func(_ context.Context, i int) error {
		mu.Lock()
		calls++
		mu.Unlock()
		if i == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if calls != 11 { // One worker: indices 0..10, then nothing more starts.
		t.Errorf("%d calls after the error at index 10, want 11", calls)
	}
}

func TestParallelReturnsParentCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := Parallel(ctx, 10, 2, func(context.Context, int) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestTailFileReturnsLastLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("a\nb\nc\nd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{1: "d\n", 2: "c\nd\n", 4: "a\nb\nc\nd\n", 10: "a\nb\nc\nd\n"} {
		got, err := tailFile(path, n)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("tail %d = %q, want %q", n, got, want)
		}
	}
}

func TestRequiredVersionReadsRequireLines(t *testing.T) {
	dir := t.TempDir()
	mod := "module x\n\nrequire k8s.io/kubernetes v1.36.3\n\nrequire (\n\tgo.etcd.io/etcd/server/v3 v3.6.16\n)\n"
	path := filepath.Join(dir, "go.mod")
	if err := os.WriteFile(path, []byte(mod), 0o600); err != nil {
		t.Fatal(err)
	}
	for module, want := range map[string]string{"k8s.io/kubernetes": "v1.36.3", "go.etcd.io/etcd/server/v3": "v3.6.16"} {
		got, err := requiredVersion(path, module)
		if err != nil || got != want {
			t.Errorf("requiredVersion(%s) = %q, %v; want %q", module, got, err, want)
		}
	}
	if _, err := requiredVersion(path, "k8s.io/api"); err == nil {
		t.Error("requiredVersion of a module not required: no error")
	}
}

func TestBuildKeyChangesWithSources(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	key := func(goEnv string) string {
		t.Helper()
		k, err := buildKey(dir, goEnv, buildFlags("v1.36.3"))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write("go.mod", "module x\n")
	write("cmd/a/main.go", "package main\n")
	k1 := key("go1.26.8 linux amd64")
	write("README.md", "not part of the build\n")
	if k := key("go1.26.8 linux amd64"); k != k1 {
		t.Errorf("key changed with a non-Go file: %s -> %s", k1, k)
	}
	if k := key("go1.26.9 linux amd64"); k == k1 {
		t.Error("key did not change with the Go version")
	}
	write("cmd/a/main.go", "package main\n\nfunc main() {}\n")
	if k := key("go1.26.8 linux amd64"); k == k1 {
		t.Error("key did not change with a Go source file")
	}
}

func TestAPIServerArgsPutCallerFlagsLast(t *testing.T) {
	creds := &credentials{servingCert: "c", servingKey: "k", serviceAccount: "sa", tokenFile: "t"}
	args := apiServerArgs("/d", 6443, "http://127.0.0.1:2379", creds, Options{
		DisableWatchCache: true,
		FeatureGates:      map[string]bool{"B": false, "A": true},
		APIServerFlags:    []string{"--authorization-mode=AlwaysAllow"},
	})
	if last := args[len(args)-1]; last != "--authorization-mode=AlwaysAllow" {
		t.Errorf("last flag = %q, want the caller's", last)
	}
	for _, want := range []string{"--watch-cache=false", "--feature-gates=A=true,B=false", "--secure-port=6443", "--bind-address=127.0.0.1"} {
		if !slices.Contains(args, want) {
			t.Errorf("flags lack %s: %s", want, strings.Join(args, " "))
		}
	}
}

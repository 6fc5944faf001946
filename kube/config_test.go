package kube

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeKubeconfig writes a kubeconfig whose contexts point at the given
// servers; the first context is current.
func writeKubeconfig(t *testing.T, dir, name string, servers ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n")
	for i, s := range servers {
		b.WriteString("- name: c" + string(rune('0'+i)) + "\n  cluster:\n    server: " + s + "\n")
	}
	b.WriteString("users:\n- name: u\n  user:\n    token: secret\ncontexts:\n")
	for i := range servers {
		n := string(rune('0' + i))
		b.WriteString("- name: ctx" + n + "\n  context:\n    cluster: c" + n + "\n    user: u\n")
	}
	b.WriteString("current-context: ctx0\n")
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// isolate points HOME, KUBECONFIG and the in-cluster variables at nothing.
func isolate(t *testing.T) (home string) {
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	return home
}

func TestLoadConfigOrder(t *testing.T) {
	home := isolate(t)
	dir := t.TempDir()
	explicit := writeKubeconfig(t, dir, "explicit", "https://explicit:6443", "https://explicit-other:6443")
	env := writeKubeconfig(t, dir, "env", "https://env:6443")
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeKubeconfig(t, filepath.Join(home, ".kube"), "config", "https://home:6443")

	check := func(opts ConfigOptions, want string) {
		t.Helper()
		cfg, err := LoadConfig(opts)
		if err != nil {
			t.Fatalf("LoadConfig(%+v): %v", opts, err)
		}
		if cfg.Host != want {
			t.Fatalf("LoadConfig(%+v).Host = %q, want %q", opts, cfg.Host, want)
		}
		if cfg.QPS != 50 || cfg.Burst != 100 || cfg.BearerToken != "secret" {
			t.Fatalf("config %+v", cfg)
		}
	}
	check(ConfigOptions{}, "https://home:6443")
	t.Setenv("KUBECONFIG", env)
	check(ConfigOptions{}, "https://env:6443")
	check(ConfigOptions{Kubeconfig: explicit}, "https://explicit:6443")
	check(ConfigOptions{Kubeconfig: explicit, Context: "ctx1"}, "https://explicit-other:6443")
	// $KUBECONFIG naming only missing files falls through to in-cluster,
	// which is absent here.
	t.Setenv("KUBECONFIG", filepath.Join(dir, "missing"))
	if _, err := LoadConfig(ConfigOptions{}); !errors.Is(err, ErrNoConfig) {
		t.Fatalf("err = %v, want ErrNoConfig", err)
	}
}

func TestLoadConfigExplicitPathMustExist(t *testing.T) {
	isolate(t)
	_, err := LoadConfig(ConfigOptions{Kubeconfig: filepath.Join(t.TempDir(), "nope")})
	if err == nil || errors.Is(err, ErrNoConfig) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("err = %v, want an error naming the missing file", err)
	}
}

func TestLoadConfigUnknownContextIsAnError(t *testing.T) {
	isolate(t)
	path := writeKubeconfig(t, t.TempDir(), "cfg", "https://a:6443")
	if _, err := LoadConfig(ConfigOptions{Kubeconfig: path, Context: "missing"}); err == nil {
		t.Fatal("no error for an unknown context")
	}
}

func TestLoadConfigNothingConfiguredSaysWhatWasTried(t *testing.T) {
	home := isolate(t)
	_, err := LoadConfig(ConfigOptions{})
	if !errors.Is(err, ErrNoConfig) {
		t.Fatalf("err = %v, want ErrNoConfig", err)
	}
	for _, want := range []string{filepath.Join(home, ".kube", "config"), "in-cluster"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestLoadConfigInCluster(t *testing.T) {
	isolate(t)
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	// The service-account token file does not exist on a test machine, so
	// in-cluster loading is attempted and fails naming the token file.
	_, err := LoadConfig(ConfigOptions{})
	if err == nil || !strings.Contains(err.Error(), "serviceaccount") {
		t.Fatalf("err = %v, want the in-cluster attempt's error", err)
	}
}

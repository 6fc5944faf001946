package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestErrorsSayWhatToDo(t *testing.T) {
	kc, err := os.ReadFile(env.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Impersonating a user nobody granted anything: discovery works (every
	// authenticated user may), listing pods is forbidden.
	nobody := write("nobody", append(append([]byte{}, kc...), []byte("\n    as: nobody\n")...))
	// Nothing listens on port 1.
	refused := write("refused", regexp.MustCompile(`https://127\.0\.0\.1:\d+`).ReplaceAll(kc, []byte("https://127.0.0.1:1")))
	badToken := write("badtoken", regexp.MustCompile(`token: .*`).ReplaceAll(kc, []byte("token: wrong")))
	home := t.TempDir() // no .kube in it

	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"no cluster configured", []string{"HOME=" + home}, []string{"get", "pods"},
			[]string{"error: no cluster configured", "--kubeconfig", "cd testenv && go run ./cmd/controlplane up"}},
		{"missing kubeconfig file", nil, []string{"get", "pods", "--kubeconfig", filepath.Join(home, "nope")},
			[]string{"error: cannot read the kubeconfig file given by --kubeconfig"}},
		{"unknown resource", []string{"KUBECONFIG=" + env.KubeconfigPath()}, []string{"get", "flurbs"},
			[]string{`error: the server has no resource type "flurbs"`, "short name"}},
		{"forbidden", []string{"KUBECONFIG=" + nobody}, []string{"watch", "pods", "-A"},
			[]string{"error: forbidden", `User "nobody" cannot`, "list and watch permission"}},
		{"unauthorized", []string{"KUBECONFIG=" + badToken}, []string{"stats", "pods"},
			[]string{"error: unauthorized", "credentials"}},
		{"unreachable", []string{"KUBECONFIG=" + refused}, []string{"get", "pods"},
			[]string{"error: cannot reach the Kubernetes API server at https://127.0.0.1:1", "connection refused", "Is the cluster running"}},
		{"bad output", []string{"KUBECONFIG=" + env.KubeconfigPath()}, []string{"get", "pods", "-o", "xml"},
			[]string{`unknown output format "xml"`}},
		{"bad label selector", []string{"KUBECONFIG=" + env.KubeconfigPath()}, []string{"watch", "pods", "-l", "app=(web"},
			[]string{`error: bad -l/--selector: label selector "app=(web"`, "app=web, tier!=db"}},
		{"bad field selector", []string{"KUBECONFIG=" + env.KubeconfigPath()}, []string{"stats", "pods", "--field-selector", "status.phase"},
			[]string{`error: bad --field-selector: field selector "status.phase"`}},
		{"$KUBECONFIG names a missing file", []string{"KUBECONFIG=" + filepath.Join(home, "gone", "kubeconfig"), "HOME=" + home}, []string{"get", "pods"},
			[]string{"error: no cluster configured: $KUBECONFIG=" + filepath.Join(home, "gone", "kubeconfig") + ", but " + filepath.Join(home, "gone", "kubeconfig") + " does not exist"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := kinformerWith(t, tc.env, tc.args...)
			if r.code != 1 {
				t.Errorf("exit %d, want 1", r.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q lacks %q", r.stderr, w)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
		})
	}
}

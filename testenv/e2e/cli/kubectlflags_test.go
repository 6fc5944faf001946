package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// age is an AGE cell ("9s", "1m5s") and the blanks after it: the one part
// of a table that may differ between two commands run one after the other.
var age = regexp.MustCompile(`\b\d+(m\d+)?s\b *`)

// TestGetLabelFlagsPrintAsKubectlDoes runs get with kubectl's label and
// header flags, and kubectl with the same, against the local control
// plane: the outputs are byte for byte the same, ages aside (each age and
// its padding is masked).
func TestGetLabelFlagsPrintAsKubectlDoes(t *testing.T) {
	kubectl := filepath.Join(repo, "bin", "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Skipf("no %s (make kubectl builds it): %v", kubectl, err)
	}
	ns := namespace(t, "cli-kubectl-flags")
	createConfigMap(t, ns, "web", map[string]string{"app": "web", "tier": "front", "example.com/team": "blue"}, map[string]string{"a": "1"})
	createConfigMap(t, ns, "db", map[string]string{"app": "db"}, nil)
	createConfigMap(t, ns, "bare", nil, map[string]string{"a": "1", "b": "2"})
	for _, args := range [][]string{
		{"get", "cm", "-n", ns, "--show-labels"},
		{"get", "cm", "-n", ns, "-L", "app", "-L", "example.com/team,tier"},
		{"get", "cm", "-n", ns, "-L", "app", "--show-labels", "--no-headers"},
		{"get", "cm", "-n", ns, "--no-headers"},
		{"get", "cm", "-n", ns, "-o", "wide", "--show-labels", "--sort-by", ".metadata.name"},
		{"get", "cm", "-n", ns, "-o", "custom-columns=NAME:.metadata.name,APP:.metadata.labels.app,A:data.a,RV:{.metadata.resourceVersion}"},
		{"get", "cm", "-n", ns, "-o", "custom-columns=NAME:.metadata.name", "--no-headers"},
		{"get", "cm", "-n", ns, "-o", "jsonpath={.items[*].metadata.name}"},
		{"get", "cm", "-n", ns, "-o", `jsonpath={range .items[*]}{.metadata.name}{"\t"}{.metadata.labels}{"\n"}{end}`},
		{"get", "cm", "web", "-n", ns, "-o", "jsonpath={.data.a} {.kind} {.metadata.labels.app}"},
		{"get", "cm", "web", "db", "-n", ns, "-o", "jsonpath={.kind}: {.items[*].metadata.name}"},
		// Streamed as the server lists them (-o name), and a table across
		// namespaces read one namespace at a time.
		{"get", "cm", "-n", ns, "-o", "name"},
		{"get", "cm", "-A", "-l", "example.com/team", "-o", "name"},
		{"get", "cm", "-A", "-l", "example.com/team"},
		{"get", "cm", "-A", "-l", "example.com/team", "-o", "wide"},
	} {
		ours := kinformer(t, args...)
		cmd := exec.Command(kubectl, args...)
		cmd.Env = append(baseEnv(), "KUBECONFIG="+env.KubeconfigPath())
		theirs, err := cmd.Output()
		if err != nil {
			t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
		}
		if ours.code != 0 {
			t.Errorf("kinformer %s: exit %d: %s", strings.Join(args, " "), ours.code, ours.stderr)
			continue
		}
		if a, b := age.ReplaceAllString(ours.stdout, "#"), age.ReplaceAllString(string(theirs), "#"); a != b {
			t.Errorf("%s:\nkinformer printed\n%q\nkubectl\n%q", strings.Join(args, " "), ours.stdout, theirs)
		}
	}
}

// Package compare holds one small controller written twice, with
// kinformer (./kinformer) and with client-go (./clientgo), for reading
// side by side; this test runs both against a real control plane and
// checks that they do the same work.
package compare

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Both programs, given three pods labelled app=web and one that is not,
// print a line for each of the three and exit 0 on SIGTERM.
func TestBothControllersReconcileTheSamePods(t *testing.T) {
	env, err := testenv.Start(t.Context(), testenv.Options{Build: testenv.BuildOptions{Progress: os.Stderr}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	}()
	const ns = "compare"
	if err := env.CreateNamespace(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	for i, app := range []string{"web", "web", "db", "web"} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Labels: map[string]string{"app": app}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}
		if _, err := env.Clientset().CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{ns + "/p0", ns + "/p1", ns + "/p3"}
	for _, prog := range []string{"kinformer", "clientgo"} {
		t.Run(prog, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), prog)
			if out, err := exec.Command("go", "build", "-o", bin, "./"+prog).CombinedOutput(); err != nil {
				t.Fatalf("build: %v\n%s", err, out)
			}
			if got := reconciled(t, bin, env.KubeconfigPath(), len(want)); !slices.Equal(got, want) {
				t.Errorf("reconciled %v, want %v", got, want)
			}
		})
	}
}

// reconciled runs the program until it has printed n lines, stops it with
// SIGTERM and returns the keys it printed, sorted.
func reconciled(t *testing.T, bin, kubeconfig string, n int) []string {
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var keys []string
	timeout := time.After(2 * time.Minute)
	for len(keys) < n {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("exited after %d lines: %s", len(keys), stderr.String())
			}
			keys = append(keys, strings.Fields(l)[0])
		case <-timeout:
			_ = cmd.Process.Kill()
			t.Fatalf("printed %v only; stderr: %s", keys, stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range lines { // drain until the program closes stdout
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v; stderr: %s", err, stderr.String())
	}
	slices.Sort(keys)
	return keys
}

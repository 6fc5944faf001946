package testenv

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// testTimeout bounds each test that talks to a control plane; it only matters if something
// hangs.
const testTimeout = 3 * time.Minute

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// dumpLogsOnFailure prints the ends of env's logs if the test fails.
func dumpLogsOnFailure(t *testing.T, env *Env) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			var b strings.Builder
			if err := env.DumpLogs(&b, 40); err != nil {
				t.Logf("dump logs: %v", err)
			}
			t.Logf("control-plane logs:\n%s", b.String())
		}
	})
}

func TestStartServesTheAPIAtTheBuiltVersion(t *testing.T) {
	dumpLogsOnFailure(t, shared)
	src, err := sourceDir("")
	if err != nil {
		t.Fatal(err)
	}
	want, err := requiredVersion(filepath.Join(src, "go.mod"), "k8s.io/kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	info, err := shared.Clientset().Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if info.GitVersion != want {
		t.Errorf("apiserver reports version %q, want %q", info.GitVersion, want)
	}
}

func TestKubeconfigReachesTheAPIServer(t *testing.T) {
	dumpLogsOnFailure(t, shared)
	ctx := testContext(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", shared.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get namespace default through the kubeconfig: %v", err)
	}
	if ns.Name != "default" {
		t.Errorf("got namespace %q", ns.Name)
	}
}

func TestCreatePodsThenListThemInPages(t *testing.T) {
	dumpLogsOnFailure(t, shared)
	ctx := testContext(t)
	const ns, n = "bulk-pods", 500
	if err := shared.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := shared.CreatePods(ctx, ns, n, BulkOptions{Labels: map[string]string{"app": "bulk"}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("created %d pods in %s", n, time.Since(start).Round(time.Millisecond)) // information, not asserted

	pods := shared.Clientset().CoreV1().Pods(ns)
	all, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=bulk"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != n {
		t.Fatalf("listed %d pods, want %d", len(all.Items), n)
	}

	seen := make(map[string]bool)
	pages := 0
	opts := metav1.ListOptions{Limit: 200}
	for {
		page, err := pods.List(ctx, opts)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		pages++
		for _, p := range page.Items {
			seen[p.Name] = true
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	if pages != 3 || len(seen) != n {
		t.Errorf("paged list: %d pages, %d distinct pods; want 3 pages, %d pods", pages, len(seen), n)
	}
	for i := range n {
		if name := "pod-" + strconv.Itoa(i); !seen[name] {
			t.Fatalf("pod %s missing from the paged list", name)
		}
	}
}

func TestCreateConfigMapsAndNamespaceTwice(t *testing.T) {
	dumpLogsOnFailure(t, shared)
	ctx := testContext(t)
	const ns = "bulk-cms"
	for range 2 { // The second call finds the namespace and must not fail.
		if err := shared.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	if err := shared.CreateConfigMaps(ctx, ns, 50, BulkOptions{NamePrefix: "x-", Workers: 4}); err != nil {
		t.Fatal(err)
	}
	cm, err := shared.Clientset().CoreV1().ConfigMaps(ns).Get(ctx, "x-49", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["index"] != "49" {
		t.Errorf("x-49 data = %v", cm.Data)
	}
	// Creating the same names again fails with the first error, wrapped.
	err = shared.CreateConfigMaps(ctx, ns, 5, BulkOptions{NamePrefix: "x-"})
	if err == nil {
		t.Fatal("creating existing config maps succeeded")
	}
}

// createConfigMap creates one config map and returns it.
func createConfigMap(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := client.CoreV1().ConfigMaps(ns).Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

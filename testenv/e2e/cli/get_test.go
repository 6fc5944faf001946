package cli_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func createConfigMap(t *testing.T, ns, name string, labels, data map[string]string) {
	t.Helper()
	_, err := env.Clientset().CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Data:       data,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGetPrintsCachedObjectsWithSelectorsAndSorting(t *testing.T) {
	ns := namespace(t, "cli-get")
	// Names in one order, sizes in another, so sorting shows.
	createConfigMap(t, ns, "c", map[string]string{"app": "web"}, map[string]string{"a": "1"})
	createConfigMap(t, ns, "a", map[string]string{"app": "web"}, map[string]string{"a": "1", "b": "9", "c": "3"})
	createConfigMap(t, ns, "b", map[string]string{"app": "web"}, map[string]string{"a": "1", "b": "2"})
	createConfigMap(t, ns, "other", map[string]string{"app": "db"}, nil)

	r := kinformer(t, "get", "configmaps", "-n", ns, "-l", "app=web")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	header, rows := table(t, r.stdout)
	if want := []string{"NAME", "DATA", "AGE"}; !slices.Equal(header, want) {
		t.Errorf("header %q, want %q", header, want)
	}
	var names []string
	for _, row := range rows {
		names = append(names, row["NAME"])
		want := map[string]string{"a": "3", "b": "2", "c": "1"}[row["NAME"]]
		if row["DATA"] != want {
			t.Errorf("%s: DATA %s, want %s", row["NAME"], row["DATA"], want)
		}
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(names, want) {
		t.Errorf("names %q, want %q (sorted by name, selector applied)", names, want)
	}
	if strings.Contains(r.stderr, "synced") {
		t.Errorf("stderr, not a terminal, reports the sync (get's output is its stdout): %q", r.stderr)
	}

	// Sorted by a field, name as the output.
	r = kinformer(t, "get", "cm", "-n", ns, "-l", "app=web", "--sort-by", "{.data.b}", "-o", "name")
	if got, want := strings.Fields(r.stdout), []string{"configmap/c", "configmap/b", "configmap/a"}; !slices.Equal(got, want) {
		t.Errorf("-o name --sort-by {.data.b}: %q, want %q (missing field first, then by value)", got, want)
	}

	// Field selector, JSON.
	r = kinformer(t, "get", "ConfigMap", "-n", ns, "--field-selector", "metadata.name=other", "-o", "json")
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("-o json: %v", err)
	}
	if list.Kind != "List" || len(list.Items) != 1 || list.Items[0].Metadata.Name != "other" {
		t.Errorf("-o json with a field selector: %+v, want a List with configmap other", list)
	}
	if len(list.Items) == 1 && len(list.Items[0].Metadata.ManagedFields) != 0 {
		t.Errorf("managedFields kept in the cache")
	}

	// One object by name, YAML.
	r = kinformer(t, "get", "cm", "b", "-n", ns, "-o", "yaml")
	if !strings.Contains(r.stdout, "name: b\n") || !strings.Contains(r.stdout, "kind: ConfigMap") {
		t.Errorf("-o yaml of b: %q", r.stdout)
	}
	// A name that does not exist.
	r = kinformer(t, "get", "cm", "nope", "-n", ns)
	if r.code == 0 || !strings.Contains(r.stderr, `configmaps "nope" not found in namespace `+ns) {
		t.Errorf("get of a missing name: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestGetShowsPodColumnsAndAllNamespaces(t *testing.T) {
	ns := namespace(t, "cli-pods")
	for i := range 3 {
		_, err := env.Clientset().CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p" + strconv.Itoa(i)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "a", Image: "registry.k8s.io/pause:3.10"},
				{Name: "b", Image: "registry.k8s.io/pause:3.10"},
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	r := kinformer(t, "get", "po", "-A", "-o", "wide", "--sort-by", ".metadata.name")
	tb := tables(t, r.stdout)[0]
	header, rows := tb.header, tb.rows
	if want := []string{"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"}; !slices.Equal(header, want) {
		t.Fatalf("header %q, want %q", header, want)
	}
	seen := 0
	for _, row := range rows {
		if row["NAMESPACE"] != ns {
			continue
		}
		seen++
		// No scheduler or kubelet runs: pods stay Pending on no node.
		if row["READY"] != "0/2" || row["STATUS"] != "Pending" || row["RESTARTS"] != "0" || row["NODE"] != "<none>" {
			t.Errorf("pod row %v", row)
		}
	}
	if seen != 3 {
		t.Errorf("%d pods of %s listed with -A, want 3", seen, ns)
	}

	// Several resources at once, by kind and short name.
	r = kinformer(t, "get", "pod,ns", "-n", ns, "-o", "name")
	got := strings.Fields(r.stdout)
	for _, want := range []string{"pod/p0", "pod/p1", "pod/p2", "namespace/" + ns} {
		if !slices.Contains(got, want) {
			t.Errorf("get pod,ns -o name: %q lacks %q", got, want)
		}
	}
}

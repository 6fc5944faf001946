package cli_test

import (
	"bufio"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// This file checks what get and watch print, as kubectl prints it: the
// server's columns, one table per kind, numbers sorted as numbers, YAML
// documents, and watch rows under their header.

// printedTable is one table as printed: its header cells and rows, cut at
// the columns where the header's words start (so "NOMINATED NODE" is one
// column, and an empty cell would be seen as one).
type printedTable struct {
	header []string
	rows   []map[string]string
	lines  []string
}

// tables parses the tables in out: blocks separated by blank lines, each a
// header line then rows.
func tables(t *testing.T, out string) []printedTable {
	t.Helper()
	var ts []printedTable
	for _, block := range strings.Split(strings.TrimRight(out, "\n"), "\n\n") {
		lines := strings.Split(block, "\n")
		starts := headerStarts(lines[0])
		pt := printedTable{lines: lines}
		for i, s := range starts {
			pt.header = append(pt.header, strings.TrimSpace(cut(lines[0], s, starts, i)))
		}
		for _, l := range lines[1:] {
			row := map[string]string{}
			for i, s := range starts {
				if strings.TrimSpace(cut(l, s, starts, i)) == "" {
					row[pt.header[i]] = "" // an empty cell, as kubectl prints an absent value
					continue
				}
				if s > 0 && (len(l) <= s || l[s-1] != ' ' || l[s] == ' ') {
					t.Fatalf("row %q is not aligned with its header %q (column %d at %d)", l, lines[0], i, s)
				}
				row[pt.header[i]] = strings.TrimSpace(cut(l, s, starts, i))
			}
			pt.rows = append(pt.rows, row)
		}
		ts = append(ts, pt)
	}
	return ts
}

// headerStarts returns where each column of a header starts: header words
// are separated by at least two spaces, while one space may join the
// words of a column name ("NOMINATED NODE").
func headerStarts(header string) []int {
	var starts []int
	for i := 0; i < len(header); i++ {
		if header[i] != ' ' && (i == 0 || (i >= 2 && header[i-1] == ' ' && header[i-2] == ' ')) {
			starts = append(starts, i)
		}
	}
	return starts
}

func cut(line string, s int, starts []int, i int) string {
	if s >= len(line) {
		return ""
	}
	if i+1 < len(starts) && starts[i+1] <= len(line) {
		return line[s:starts[i+1]]
	}
	return line[s:]
}

func column(pt printedTable, name string) []string {
	var out []string
	for _, r := range pt.rows {
		out = append(out, r[name])
	}
	return out
}

func TestGetSortsNumbersAsNumbers(t *testing.T) {
	ns := namespace(t, "cli-sort-numbers")
	// Names in text order, ranks in another, so that text and numeric
	// order differ: as text "10" < "100" < "2" < "9".
	for name, rank := range map[string]string{"a": "100", "b": "9", "c": "10", "d": "2"} {
		createConfigMap(t, ns, name, map[string]string{"rank": rank}, map[string]string{"n": rank})
	}
	want := []string{"d", "b", "c", "a"} // 2, 9, 10, 100

	// -o name: from metadata.
	r := kinformer(t, "get", "cm", "-n", ns, "-o", "name", "--sort-by", ".metadata.labels.rank")
	var got []string
	for _, f := range strings.Fields(r.stdout) {
		got = append(got, strings.TrimPrefix(f, "configmap/"))
	}
	if !slices.Equal(got, want) {
		t.Errorf("-o name --sort-by .metadata.labels.rank: %q, want %q (2, 9, 10, 100)", got, want)
	}
	// Names given print in the order given.
	r = kinformer(t, "get", "cm", "c", "a", "-n", ns, "-o", "name")
	if got := strings.Fields(r.stdout); !slices.Equal(got, []string{"configmap/c", "configmap/a"}) {
		t.Errorf("get cm c a -o name: %q, want c then a", got)
	}
	// A table sorted by a field outside metadata.
	r = kinformer(t, "get", "cm", "-n", ns, "--sort-by", "{.data.n}")
	if got := column(tables(t, r.stdout)[0], "NAME"); !slices.Equal(got, want) {
		t.Errorf("table --sort-by {.data.n}: %q, want %q", got, want)
	}
	// Resource versions: ascending as integers.
	r = kinformer(t, "get", "cm", "-n", ns, "--sort-by", ".metadata.resourceVersion")
	names := column(tables(t, r.stdout)[0], "NAME")
	var rvs []int
	for _, n := range names {
		cm, err := env.Clientset().CoreV1().ConfigMaps(ns).Get(t.Context(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rv, _ := strconv.Atoi(cm.ResourceVersion)
		rvs = append(rvs, rv)
	}
	if len(rvs) != 4 || !slices.IsSorted(rvs) {
		t.Errorf("--sort-by .metadata.resourceVersion: %q with versions %v, want ascending", names, rvs)
	}
}

// createCRD creates a custom resource definition and waits until discovery
// serves it.
func createCRD(t *testing.T, crd *unstructured.Unstructured, groupVersion string) {
	t.Helper()
	ctx := within(t, time.Minute)
	dyn, err := dynamic.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if list, err := dc.ServerResourcesForGroupVersion(groupVersion); err == nil && len(list.APIResources) > 0 {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%s never appeared in discovery", groupVersion)
		}
	}
}

func TestGetAndWatchShowCustomResourcePrinterColumns(t *testing.T) {
	createCRD(t, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "gadgets.output.kinformer.dev"},
		"spec": map[string]any{
			"group": "output.kinformer.dev",
			"scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
				"additionalPrinterColumns": []any{
					map[string]any{"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
					map[string]any{"name": "Color", "type": "string", "jsonPath": ".spec.color"},
					map[string]any{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
					map[string]any{"name": "Owner", "type": "string", "jsonPath": ".spec.owner", "priority": 1},
				},
			}},
		},
	}}, "output.kinformer.dev/v1")
	ns := namespace(t, "cli-crd-columns")
	dyn, err := dynamic.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	gadgetsGVR := schema.GroupVersionResource{Group: "output.kinformer.dev", Version: "v1", Resource: "gadgets"}
	gadgets := dyn.Resource(gadgetsGVR).Namespace(ns)
	for name, spec := range map[string]map[string]any{
		"big":   {"size": int64(10), "color": "red", "owner": "ann"},
		"small": {"size": int64(9), "color": "blue", "owner": "bob"},
	} {
		g := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "output.kinformer.dev/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": name}, "spec": spec,
		}}
		if _, err := gadgets.Create(t.Context(), g, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	r := kinformer(t, "get", "gadgets", "-n", ns, "--sort-by", ".spec.size")
	tb := tables(t, r.stdout)[0]
	if want := []string{"NAME", "SIZE", "COLOR", "AGE"}; !slices.Equal(tb.header, want) {
		t.Errorf("header %q, want the CRD's printer columns %q", tb.header, want)
	}
	if got := column(tb, "NAME"); !slices.Equal(got, []string{"small", "big"}) {
		t.Errorf("sorted by .spec.size: %q, want small (9) before big (10)", got)
	}
	if got := column(tb, "SIZE"); !slices.Equal(got, []string{"9", "10"}) {
		t.Errorf("SIZE %q", got)
	}
	if got := column(tb, "COLOR"); !slices.Equal(got, []string{"blue", "red"}) {
		t.Errorf("COLOR %q", got)
	}

	r = kinformer(t, "get", "gadget", "-n", ns, "-o", "wide")
	tb = tables(t, r.stdout)[0]
	if want := []string{"NAME", "SIZE", "COLOR", "AGE", "OWNER"}; !slices.Equal(tb.header, want) {
		t.Errorf("-o wide header %q, want %q", tb.header, want)
	}
	if got := column(tb, "OWNER"); !slices.Equal(got, []string{"ann", "bob"}) {
		t.Errorf("OWNER %q", got)
	}

	// An object without the optional fields: its cells are empty, as
	// kubectl prints them, in get, get -o wide and watch alike.
	bareNS := namespace(t, "cli-crd-bare")
	bare := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "output.kinformer.dev/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "bare"}, "spec": map[string]any{},
	}}
	if _, err := dyn.Resource(gadgetsGVR).Namespace(bareNS).Create(t.Context(), bare, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"get", "gadgets", "-n", bareNS}, {"get", "gadgets", "-n", bareNS, "-o", "wide"}} {
		r = kinformer(t, args...)
		if strings.Contains(r.stdout, "<none>") {
			t.Errorf("%v printed <none> for absent optional columns, kubectl prints nothing:\n%s", args, r.stdout)
		}
		row := tables(t, r.stdout)[0].rows[0]
		if row["NAME"] != "bare" || row["SIZE"] != "" || row["COLOR"] != "" || row["AGE"] == "" {
			t.Errorf("%v: row %v, want bare with SIZE and COLOR empty and an AGE", args, row)
		}
	}

	// watch shows the same columns, and a change's new values.
	w := start(t, []string{"KUBECONFIG=" + env.KubeconfigPath()}, kinformerBin, "watch", "gadgets", "-n", ns)
	ctx := within(t, time.Minute)
	w.stderr.waitFor(ctx, t, 0, "the sync report", func(l string) bool { return strings.HasPrefix(l, "synced gadgets") })
	if _, err := gadgets.Patch(t.Context(), "small", types.MergePatchType, []byte(`{"spec":{"size":11}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	w.stdout.waitFor(ctx, t, 0, "MODIFIED small", func(l string) bool { return strings.HasPrefix(l, "MODIFIED ") })
	if code := w.interrupt(ctx, t); code != 0 {
		t.Errorf("exit %d after Ctrl-C", code)
	}
	tb = tables(t, w.stdout.String())[0]
	if want := []string{"EVENT", "NAME", "SIZE", "COLOR", "AGE"}; !slices.Equal(tb.header, want) {
		t.Errorf("watch header %q, want %q", tb.header, want)
	}
	if last := tb.rows[len(tb.rows)-1]; last["NAME"] != "small" || last["SIZE"] != "11" {
		t.Errorf("watch's MODIFIED row %v, want small with SIZE 11", last)
	}
}

func TestGetWideShowsKubectlsExtraColumns(t *testing.T) {
	ns := namespace(t, "cli-wide")
	labels := map[string]string{"app": "web"}
	replicas := int32(1)
	_, err := env.Clientset().AppsV1().Deployments(ns).Create(t.Context(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "app", Image: "registry.k8s.io/pause:3.10"},
					{Name: "sidecar", Image: "registry.k8s.io/pause:3.9"},
				}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.Clientset().CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "gated"},
		Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Name: "a", Image: "registry.k8s.io/pause:3.10"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	r := kinformer(t, "get", "deploy", "-n", ns, "-o", "wide")
	tb := tables(t, r.stdout)[0]
	if want := []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"}; !slices.Equal(tb.header, want) {
		t.Errorf("deploy -o wide header %q, want %q", tb.header, want)
	}
	if len(tb.rows) != 1 {
		t.Fatalf("rows %v", tb.rows)
	}
	row := tb.rows[0]
	if row["CONTAINERS"] != "app,sidecar" || row["IMAGES"] != "registry.k8s.io/pause:3.10,registry.k8s.io/pause:3.9" || row["SELECTOR"] != "app=web" {
		t.Errorf("deploy -o wide row %v", row)
	}
	r = kinformer(t, "get", "deploy", "-n", ns)
	if got, want := tables(t, r.stdout)[0].header, []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}; !slices.Equal(got, want) {
		t.Errorf("deploy header %q, want %q", got, want)
	}

	r = kinformer(t, "get", "po", "-n", ns, "-o", "wide")
	tb = tables(t, r.stdout)[0]
	if want := []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"}; !slices.Equal(tb.header, want) {
		t.Errorf("pods -o wide header %q, want %q", tb.header, want)
	}
	// No scheduler runs: the pod stays Pending, on no node, its gate unmet.
	want := map[string]string{"NAME": "gated", "READY": "0/1", "STATUS": "Pending", "NODE": "<none>", "NOMINATED NODE": "<none>", "READINESS GATES": "0/1"}
	for k, v := range want {
		if tb.rows[0][k] != v {
			t.Errorf("pod -o wide %s = %q, want %q (row %v)", k, tb.rows[0][k], v, tb.rows[0])
		}
	}
}

func TestGetPrintsOneTablePerKind(t *testing.T) {
	ns := namespace(t, "cli-per-kind")
	createConfigMap(t, ns, "settings", nil, map[string]string{"a": "1", "b": "2"})
	_, err := env.Clientset().CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "token"},
		StringData: map[string]string{"t": "x"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Deployments: none, so no table for them.
	r := kinformer(t, "get", "cm,secret,deploy", "-n", ns)
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	ts := tables(t, r.stdout)
	if len(ts) != 2 {
		t.Fatalf("%d tables, want 2 (configmaps, secrets; none for the deployments):\n%s", len(ts), r.stdout)
	}
	if want := []string{"NAME", "DATA", "AGE"}; !slices.Equal(ts[0].header, want) {
		t.Errorf("first table's header %q, want the configmaps' %q", ts[0].header, want)
	}
	if want := []string{"NAME", "TYPE", "DATA", "AGE"}; !slices.Equal(ts[1].header, want) {
		t.Errorf("second table's header %q, want the secrets' %q", ts[1].header, want)
	}
	if got := ts[0].rows; len(got) != 1 || got[0]["NAME"] != "configmap/settings" || got[0]["DATA"] != "2" {
		t.Errorf("configmap rows %v, want configmap/settings with 2 keys", got)
	}
	if strings.Contains(r.stderr, "synced") {
		t.Errorf("piped, get reported its sync on stderr: %q", r.stderr)
	}
	if got := ts[1].rows; len(got) != 1 || got[0]["NAME"] != "secret/token" || got[0]["TYPE"] != "Opaque" || got[0]["DATA"] != "1" {
		t.Errorf("secret rows %v, want secret/token Opaque 1", got)
	}
}

// yamlDocuments splits a YAML stream into its documents.
func yamlDocuments(t *testing.T, s string) []string {
	t.Helper()
	rd := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(s)))
	var docs []string
	for {
		d, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("YAML %q: %v", s, err)
		}
		docs = append(docs, string(d))
	}
}

func TestYAMLHasNoLeadingSeparator(t *testing.T) {
	ns := namespace(t, "cli-yaml")
	createConfigMap(t, ns, "one", nil, map[string]string{"k": "v"})
	createConfigMap(t, ns, "two", nil, nil)
	for _, args := range [][]string{{"cm", "one"}, {"cm"}, {"cm", "one", "two"}} {
		r := kinformer(t, append(append([]string{"get"}, args...), "-n", ns, "-o", "yaml")...)
		if r.code != 0 {
			t.Fatalf("get %v: exit %d", args, r.code)
		}
		if strings.Contains(r.stdout, "---") {
			t.Errorf("get %v -o yaml prints a --- separator:\n%s", args, r.stdout)
		}
		if docs := yamlDocuments(t, r.stdout); len(docs) != 1 {
			t.Errorf("get %v -o yaml: %d documents, want 1", args, len(docs))
		}
		wantKind := "kind: List"
		if len(args) == 2 {
			wantKind = "kind: ConfigMap"
		}
		if !strings.Contains(r.stdout, "\n"+wantKind+"\n") {
			t.Errorf("get %v -o yaml lacks %q:\n%s", args, wantKind, r.stdout)
		}
	}

	// watch: one document per event, separated, none before the first.
	w := start(t, []string{"KUBECONFIG=" + env.KubeconfigPath()}, kinformerBin, "watch", "cm", "-n", ns, "-o", "yaml")
	ctx := within(t, time.Minute)
	w.stderr.waitFor(ctx, t, 0, "the sync report", func(l string) bool { return strings.HasPrefix(l, "synced configmaps") })
	createConfigMap(t, ns, "three", nil, nil)
	w.stdout.waitFor(ctx, t, 0, "the new configmap", func(l string) bool { return l == "    name: three" })
	if code := w.interrupt(ctx, t); code != 0 {
		t.Errorf("exit %d after Ctrl-C", code)
	}
	out := w.stdout.String()
	if strings.HasPrefix(out, "---") {
		t.Errorf("watch -o yaml starts with ---:\n%s", out)
	}
	if docs := yamlDocuments(t, out); len(docs) != 3 || strings.Count(out, "---\n") != 2 {
		t.Errorf("watch -o yaml: %d documents, %d separators; want 3 and 2:\n%s", len(docs), strings.Count(out, "---\n"), out)
	}
}

func TestWatchRowsLineUpWithTheHeader(t *testing.T) {
	ns := namespace(t, "cli-watch-align")
	createConfigMap(t, ns, "existing", nil, map[string]string{"a": "1"})
	w := start(t, []string{"KUBECONFIG=" + env.KubeconfigPath()}, kinformerBin, "watch", "cm", "-n", ns)
	ctx := within(t, time.Minute)
	w.stderr.waitFor(ctx, t, 0, "the sync report", func(l string) bool { return strings.HasPrefix(l, "synced configmaps") })
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	createConfigMap(t, ns, "x", nil, map[string]string{"n": "1"})
	w.stdout.waitFor(ctx, t, 0, "ADDED x", func(l string) bool { return strings.HasPrefix(l, "ADDED ") && strings.Fields(l)[1] == "x" })
	if _, err := cms.Patch(t.Context(), "x", types.MergePatchType, []byte(`{"data":{"n":"2","m":"3"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	w.stdout.waitFor(ctx, t, 0, "MODIFIED x", func(l string) bool { return strings.HasPrefix(l, "MODIFIED ") })
	if err := cms.Delete(t.Context(), "x", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.stdout.waitFor(ctx, t, 0, "DELETED x", func(l string) bool { return strings.HasPrefix(l, "DELETED ") })
	// A name longer than any before: its row still lines up, under a
	// header printed again.
	createConfigMap(t, ns, "a-configmap-with-a-much-longer-name", nil, nil)
	w.stdout.waitFor(ctx, t, 0, "the long name", func(l string) bool { return strings.Contains(l, "a-configmap-with-a-much-longer-name") })
	if code := w.interrupt(ctx, t); code != 0 {
		t.Errorf("exit %d after Ctrl-C", code)
	}
	out := w.stdout.String()
	var current []int
	events := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "EVENT ") {
			current = headerStarts(l)
			continue
		}
		if current == nil {
			t.Fatalf("a row before the header:\n%s", out)
		}
		events[strings.Fields(l)[0]] = true
		for i, s := range current[1:] {
			if len(l) <= s || l[s-1] != ' ' || l[s] == ' ' {
				t.Errorf("row %q: column %d does not start at %d, under its header:\n%s", l, i+1, s, out)
				break
			}
		}
	}
	for _, e := range []string{"ADDED", "MODIFIED", "DELETED"} {
		if !events[e] {
			t.Errorf("no %s row:\n%s", e, out)
		}
	}
}

func TestBareGetSaysWhatToType(t *testing.T) {
	r := kinformer(t, "get")
	if r.code == 0 || !strings.Contains(r.stderr, "no resource type given") || !strings.Contains(r.stderr, "kinformer get pods") ||
		strings.Contains(r.stderr, "requires at least") {
		t.Errorf("bare get: exit %d, stderr %q; want a hint naming an example", r.code, r.stderr)
	}
}

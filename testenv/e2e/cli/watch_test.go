package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestWatchPrintsListThenEveryChange(t *testing.T) {
	ns := namespace(t, "cli-watch-json")
	createConfigMap(t, ns, "before", nil, map[string]string{"k": "v"})
	w := start(t, []string{"KUBECONFIG=" + env.KubeconfigPath()}, kinformerBin, "watch", "cm", "-n", ns, "-o", "json")
	ctx := within(t, time.Minute)

	type event struct {
		Type   string `json:"type"`
		Object struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Data     map[string]string `json:"data"`
		} `json:"object"`
	}
	parse := func(line string) (event, bool) {
		var ev event
		return ev, json.Unmarshal([]byte(line), &ev) == nil
	}
	is := func(typ, name string) func(string) bool {
		return func(line string) bool {
			ev, ok := parse(line)
			return ok && ev.Type == typ && ev.Object.Metadata.Name == name
		}
	}
	i := w.stdout.waitFor(ctx, t, 0, "ADDED before", is("ADDED", "before"))
	w.stderr.waitFor(ctx, t, 0, "the sync report", func(l string) bool { return strings.HasPrefix(l, "synced configmaps") })

	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	createConfigMap(t, ns, "x", nil, map[string]string{"n": "1"})
	i = w.stdout.waitFor(ctx, t, i+1, "ADDED x", is("ADDED", "x"))
	if _, err := cms.Patch(t.Context(), "x", types.MergePatchType, []byte(`{"data":{"n":"2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	i = w.stdout.waitFor(ctx, t, i+1, "MODIFIED x", is("MODIFIED", "x"))
	if ev, _ := parse(w.stdout.snapshot()[i]); ev.Object.Data["n"] != "2" {
		t.Errorf("MODIFIED x carries data %v, want n=2", ev.Object.Data)
	}
	if err := cms.Delete(t.Context(), "x", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.stdout.waitFor(ctx, t, i+1, "DELETED x", is("DELETED", "x"))

	if code := w.interrupt(ctx, t); code != 0 {
		t.Errorf("exit %d after Ctrl-C, want 0; stderr:\n%s", code, w.stderr)
	}
	for _, line := range w.stdout.snapshot() {
		if _, ok := parse(line); !ok {
			t.Errorf("stdout line is not a JSON event: %q", line)
		}
	}
}

func TestWatchTableShowsKindColumns(t *testing.T) {
	ns := namespace(t, "cli-watch-table")
	pods := env.Clientset().CoreV1().Pods(ns)
	newPod := func(name string) {
		_, err := pods.Create(t.Context(), &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "registry.k8s.io/pause:3.10"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	newPod("b-existing")
	newPod("a-existing")
	w := start(t, []string{"KUBECONFIG=" + env.KubeconfigPath()}, kinformerBin, "watch", "po", "-n", ns)
	ctx := within(t, time.Minute)
	hasName := func(event, name string) func(string) bool {
		return func(l string) bool {
			f := strings.Fields(l)
			return len(f) > 2 && f[0] == event && f[1] == name
		}
	}
	w.stdout.waitFor(ctx, t, 0, "b-existing", hasName("ADDED", "b-existing"))
	newPod("c-new")
	w.stdout.waitFor(ctx, t, 0, "c-new", hasName("ADDED", "c-new"))
	if code := w.interrupt(ctx, t); code != 0 {
		t.Errorf("exit %d after Ctrl-C, want 0", code)
	}
	header, rows := table(t, w.stdout.String())
	if got, want := strings.Join(header, " "), "EVENT NAME READY STATUS RESTARTS AGE"; got != want {
		t.Errorf("header %q, want %q", got, want)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r["NAME"])
		if r["EVENT"] != "ADDED" || r["READY"] != "0/1" || r["STATUS"] != "Pending" {
			t.Errorf("row %v", r)
		}
	}
	// The existing pods come sorted, before the new one.
	if got := strings.Join(names, " "); got != "a-existing b-existing c-new" {
		t.Errorf("rows %q, want a-existing b-existing c-new", got)
	}
}

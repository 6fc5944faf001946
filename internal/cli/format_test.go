package cli

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSortObjectsByField(t *testing.T) {
	mk := func(name string, restarts any) *unstructured.Unstructured {
		f := map[string]any{}
		if restarts != nil {
			f["status"] = map[string]any{"n": restarts}
		}
		return obj("Pod", "ns", name, 0, f)
	}
	objs := []*unstructured.Unstructured{mk("c", int64(10)), mk("a", int64(9)), mk("d", nil), mk("b", int64(10))}
	path, err := parseSortBy("{.status.n}")
	if err != nil {
		t.Fatal(err)
	}
	sortObjects(objs, path)
	var got []string
	for _, o := range objs {
		got = append(got, o.GetName())
	}
	// Missing first; 9 before 10 (numbers, not text); ties by name.
	if want := []string{"d", "a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("sorted %q, want %q", got, want)
	}
	for _, bad := range []string{"{.items[0].name}", ".a..b", "{.metadata.labels[*]}"} {
		if _, err := parseSortBy(bad); err == nil {
			t.Errorf("parseSortBy(%q) accepted", bad)
		}
	}
	for _, good := range []string{".metadata.name", "metadata.name", "{.metadata.name}"} {
		if p, err := parseSortBy(good); err != nil || !slices.Equal(p, []string{"metadata", "name"}) {
			t.Errorf("parseSortBy(%q) = %q, %v", good, p, err)
		}
	}
}

func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		items, total int64
		bar          int
		want         string
	}{
		{1500, 0, 0, "syncing pods: 1500 objects, 750/s, 2s"},
		{500, 2000, 0, "syncing pods: 500/2000 objects, 250/s, 2s"},
		{1000, 2000, 10, "[█████░░░░░] syncing pods: 1000/2000 objects, 500/s, 2s"},
	} {
		if got := progressLine("pods", tc.items, tc.total, 2*time.Second, tc.bar); got != tc.want {
			t.Errorf("progressLine(%d, %d, bar %d) = %q, want %q", tc.items, tc.total, tc.bar, got, tc.want)
		}
	}
	// Without a total the bar still moves.
	if a, b := progressLine("p", 1, 0, 0, 10), progressLine("p", 1, 0, 300*time.Millisecond, 10); a[:12] == b[:12] {
		t.Errorf("indeterminate bar did not move: %q, %q", a, b)
	}
}

func TestStatsLineIsParseable(t *testing.T) {
	s := statSample{name: "pods -n web", resource: "pods", namespace: "web", objects: 150, synced: true, syncTime: 84 * time.Millisecond,
		added: 120, modified: 240, deleted: 118, addRate: 2, modifyRate: 4.25, deleteRate: 2,
		backlog: 3, merged: 7, rv: "4711", lists: 1, watches: 2}
	line := formatStatsLine(s, processSample{heapBytes: 15 << 20})
	kv := map[string]string{}
	for _, f := range strings.Fields(line) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("field %q is not key=value in %q", f, line)
		}
		kv[k] = v
	}
	want := map[string]string{"resource": "pods", "namespace": "web", "objects": "150", "synced": "true", "sync": "84ms",
		"added/s": "2.0", "modified/s": "4.2", "deleted/s": "2.0", "added": "120", "modified": "240", "deleted": "118",
		"backlog": "3", "merged": "7", "rv": "4711", "lists": "1", "watches": "2", "errors": "0", "heap": "15.0MiB"}
	for k, v := range want {
		if kv[k] != v {
			t.Errorf("%s=%q, want %q (line %q)", k, kv[k], v, line)
		}
	}
	unsynced := formatStatsLine(statSample{name: "cm", resource: "configmaps"}, processSample{})
	if !strings.Contains(unsynced, "resource=configmaps namespace=* ") || !strings.Contains(unsynced, "synced=false sync=- ") || !strings.Contains(unsynced, "rv=-") {
		t.Errorf("unsynced line %q", unsynced)
	}
}

func TestStatsTableForTerminals(t *testing.T) {
	lines := statsTable([]statSample{
		{name: "pods", objects: 10, synced: true, syncTime: time.Second, rv: "5"},
		{name: "configmaps", listed: 40, total: 100},
	}, processSample{heapBytes: 2048, goroutines: 12, uptime: 5 * time.Second})
	if len(lines) != 5 {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	if f := strings.Fields(lines[1]); f[0] != "pods" || f[1] != "10" || f[2] != "in" || f[3] != "1s" {
		t.Errorf("synced row %q", lines[1])
	}
	if !strings.Contains(lines[2], "40/100 listed") || !strings.Contains(lines[2], "syncing") {
		t.Errorf("syncing row %q", lines[2])
	}
	if !strings.Contains(lines[4], "heap in use 2.0KiB") {
		t.Errorf("process line %q", lines[4])
	}
}

func TestBytesIEC(t *testing.T) {
	for n, want := range map[uint64]string{0: "0B", 1023: "1023B", 1536: "1.5KiB", 5 << 30: "5.0GiB"} {
		if got := bytesIEC(n); got != want {
			t.Errorf("bytesIEC(%d) = %q, want %q", n, got, want)
		}
	}
}

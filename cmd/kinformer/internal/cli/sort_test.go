package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestNaturalCompare(t *testing.T) {
	// Each is before the next.
	ordered := []string{"", "0", "00", "1", "01", "2", "9", "10", "997", "1000", "a", "a1", "a2", "a10", "a10b",
		"web-2", "web-9", "web-10", "web-10-a", "web-100", "web-a"}
	for i := range ordered {
		for j := range ordered {
			got := naturalCompare(ordered[i], ordered[j])
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got != want {
				t.Errorf("naturalCompare(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func TestSortByComparesLikeKubectl(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []any // object i gets values[i]; names are o0, o1, ...
		want   []int // indexes in sorted order
	}{
		{"resource versions (strings) as numbers", []any{"1000", "997", "10", "2"}, []int{3, 2, 1, 0}},
		{"JSON numbers from table rows", []any{json.Number("10"), json.Number("9.5"), json.Number("-1")}, []int{2, 1, 0}},
		{"integers from unstructured", []any{int64(10), int64(9), int64(100)}, []int{1, 0, 2}},
		{"quantities", []any{"1Gi", "500Mi", "2G", "100m"}, []int{3, 1, 0, 2}},
		{"names, naturally", []any{"web-10", "web-9", "web-1"}, []int{2, 1, 0}},
		{"timestamps", []any{"2026-11-21T12:00:10Z", "2026-11-21T12:00:09Z", "2025-01-01T00:00:00Z"}, []int{2, 1, 0}},
		{"missing first, ties by name", []any{"b", nil, "a", "a"}, []int{1, 2, 3, 0}},
		{"booleans", []any{true, false}, []int{1, 0}},
	} {
		objs := make([]*unstructured.Unstructured, len(tc.values))
		for i, v := range tc.values {
			f := map[string]any{}
			if v != nil {
				f["spec"] = map[string]any{"v": v}
			}
			objs[i] = obj("Thing", "ns", fmt.Sprintf("o%d", i), 0, f)
		}
		sortObjects(objs, []string{"spec", "v"})
		var got []string
		var want []string
		for i, o := range objs {
			got = append(got, o.GetName())
			want = append(want, fmt.Sprintf("o%d", tc.want[i]))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: sorted %q, want %q", tc.name, got, want)
		}
	}
}

func TestSortByIsATotalOrderOnMixedValues(t *testing.T) {
	// Whatever the values, the sort agrees with itself: sorting a shuffled
	// copy gives the same order.
	values := []any{"10", "9", "1Gi", "2Gi", "5x", "web-10", "web-9", json.Number("3"), int64(3), nil, true, "", "0.5", "a"}
	mk := func() []*unstructured.Unstructured {
		var objs []*unstructured.Unstructured
		for i, v := range values {
			f := map[string]any{"spec": map[string]any{"v": v}}
			if v == nil {
				f = nil
			}
			objs = append(objs, obj("Thing", "ns", fmt.Sprintf("o%02d", i), 0, f))
		}
		return objs
	}
	first := mk()
	sortObjects(first, []string{"spec", "v"})
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		objs := mk()
		r.Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
		sortObjects(objs, []string{"spec", "v"})
		for i := range objs {
			if objs[i].GetName() != first[i].GetName() {
				t.Fatalf("order depends on the input order: %v vs %v", names(objs), names(first))
			}
		}
	}
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func TestSortMetadataAndRowsAgreeWithFullObjects(t *testing.T) {
	created := []time.Duration{time.Hour, time.Minute, 2 * time.Hour}
	rvs := []string{"1000", "997", "99"}
	var full []*unstructured.Unstructured
	var meta []*metav1.PartialObjectMetadata
	var rows []*tableRow
	for i := range 3 {
		u := obj("Pod", "ns", fmt.Sprintf("p%d", i), created[i], nil)
		u.SetResourceVersion(rvs[i])
		u.SetLabels(map[string]string{"rank": fmt.Sprint(3 - i)})
		full = append(full, u)
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: u.GetName(),
			ResourceVersion: rvs[i], CreationTimestamp: u.GetCreationTimestamp(), Labels: u.GetLabels()}}
		meta = append(meta, m)
		rows = append(rows, &tableRow{Namespace: "ns", Name: u.GetName(), Object: map[string]any{"metadata": u.Object["metadata"]}})
	}
	for _, path := range [][]string{{"metadata", "resourceVersion"}, {"metadata", "creationTimestamp"}, {"metadata", "labels", "rank"}, {"metadata", "name"}} {
		f := slices.Clone(full)
		m := slices.Clone(meta)
		r := slices.Clone(rows)
		sortObjects(f, path)
		sortMetadata(m, path)
		sortRows(r, path)
		for i := range f {
			if f[i].GetName() != m[i].GetName() || f[i].GetName() != r[i].GetName() {
				t.Errorf("--sort-by %v: objects %v, metadata %s..., rows %s...", path, names(f), m[0].Name, r[0].Name)
				break
			}
		}
	}
	sortMetadata(meta, []string{"metadata", "resourceVersion"})
	if meta[0].Name != "p2" || meta[2].Name != "p0" {
		t.Errorf("resourceVersion 99 < 997 < 1000 not respected: %s %s %s", meta[0].Name, meta[1].Name, meta[2].Name)
	}
}

func TestParseSortByAndSourceChoice(t *testing.T) {
	for _, bad := range []string{".a..b", "{.metadata.labels[*]}", "{.spec.containers[?(@.name=='x')].image}",
		"{.a[1:2]}", ".a[", ".a[x]", "{.a,b}", "{..name}", ".a['']", ".a['[0]']", ".a[99999999999]"} {
		if _, err := parseSortBy(bad); err == nil {
			t.Errorf("parseSortBy(%q) accepted", bad)
		}
	}
	for _, tc := range []struct {
		output, sortBy string
		want           outputSource
	}{
		{"name", "", fromMetadata},
		{"name", ".metadata.resourceVersion", fromMetadata},
		{"name", ".status.phase", fromObjects},
		{"", "", fromTable},
		{"wide", ".status.phase", fromTable},
		{"json", "", fromObjects},
		{"yaml", "", fromObjects},
	} {
		path, err := parseSortBy(tc.sortBy)
		if err != nil {
			t.Fatal(err)
		}
		if got := sourceFor(tc.output, path); got != tc.want {
			t.Errorf("-o %q --sort-by %q: source %s, want %s", tc.output, tc.sortBy, got, tc.want)
		}
	}
	one, all := []target{podTarget("web")}, []target{podTarget(""), deployTarget("web", 1)}
	for _, tc := range []struct {
		name    string
		targets []target
		sortBy  string
		watch   bool
		sharded bool
		want    includeObject
		keep    bool
	}{
		{"one namespace", one, "", false, false, includeNone, false},
		{"every namespace", all, "", false, false, includeMetadata, false},
		{"watch", one, "", true, false, includeMetadata, false},
		{"sharded", one, "", false, true, includeMetadata, false},
		{"sorted by metadata", one, ".metadata.resourceVersion", false, false, includeMetadata, true},
		{"sorted by another field", all, ".status.phase", false, true, includeWhole, true},
	} {
		path, _ := parseSortBy(tc.sortBy)
		if got, keep := tableInclude(tc.targets, path, tc.watch, tc.sharded); got != tc.want || keep != tc.keep {
			t.Errorf("%s: includeObject %s (keep %t), want %s (keep %t)", tc.name, got, keep, tc.want, tc.keep)
		}
	}
}

// kubectl's --sort-by takes array indexes and bracketed keys: the first
// container's image, the restart count of the first container status, a
// label whose key has dots.
func TestSortByArrayIndexesAndBracketedKeys(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{"{.spec.containers[0].image}", []string{"spec", "containers", "[0]", "image"}},
		{".status.containerStatuses[0].restartCount", []string{"status", "containerStatuses", "[0]", "restartCount"}},
		{"{.spec.containers[-1].name}", []string{"spec", "containers", "[-1]", "name"}},
		{"{.metadata.labels['app.kubernetes.io/name']}", []string{"metadata", "labels", "app.kubernetes.io/name"}},
		{`.metadata.labels["tier"]`, []string{"metadata", "labels", "tier"}},
	} {
		got, err := parseSortBy(tc.expr)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseSortBy(%q) = %q, %v; want %q", tc.expr, got, err, tc.want)
		}
	}
	pod := func(name, image string, restarts int64, statuses bool) *unstructured.Unstructured {
		o := map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "main", "image": image}, map[string]any{"name": "side", "image": "zz"},
		}}}
		if statuses {
			o["status"] = map[string]any{"containerStatuses": []any{map[string]any{"restartCount": restarts}}}
		}
		return obj("Pod", "ns", name, 0, o)
	}
	objs := []*unstructured.Unstructured{pod("a", "nginx:2", 10, true), pod("b", "busybox", 9, true), pod("c", "alpine", 0, false)}
	names := func() []string {
		var n []string
		for _, o := range objs {
			n = append(n, o.GetName())
		}
		return n
	}
	path, _ := parseSortBy("{.spec.containers[0].image}")
	sortObjects(objs, path)
	if got := names(); !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Errorf("by the first image: %q, want c (alpine), b (busybox), a (nginx)", got)
	}
	path, _ = parseSortBy(".status.containerStatuses[0].restartCount")
	sortObjects(objs, path)
	// c has no status: first, as kubectl puts objects without the field.
	if got := names(); !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Errorf("by restarts: %q, want c (none), b (9), a (10)", got)
	}
	path, _ = parseSortBy("{.spec.containers[5].image}")
	sortObjects(objs, path) // out of range: absent everywhere, order by name
	if got := names(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("index out of range: %q, want by name", got)
	}
}

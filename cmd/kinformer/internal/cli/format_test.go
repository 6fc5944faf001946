package cli

import (
	"slices"
	"testing"

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
	for _, bad := range []string{".a..b", "{.metadata.labels[*]}", "{.spec.containers[?(@.name=='x')].image}",
		"{.a[1:2]}", ".a[", ".a[x]", "{.a,b}", "{..name}", ".a['']", ".a['[0]']", ".a[99999999999]"} {
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

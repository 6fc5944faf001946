package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// parseSortBy turns a --sort-by expression into a field path. It accepts
// kubectl's JSONPath form for plain fields ("{.metadata.name}") and the
// shorter ".metadata.name" or "metadata.name"; array indexes and filters
// are not supported.
func parseSortBy(expr string) ([]string, error) {
	e := strings.TrimSpace(expr)
	e = strings.TrimSuffix(strings.TrimPrefix(e, "{"), "}")
	e = strings.TrimPrefix(e, ".")
	if e == "" {
		return nil, nil
	}
	path := strings.Split(e, ".")
	for _, p := range path {
		if p == "" || strings.ContainsAny(p, "[]*?@()") {
			return nil, fmt.Errorf("--sort-by %q: only a plain field path such as .metadata.name or {.status.phase} is supported", expr)
		}
	}
	return path, nil
}

// sortObjects sorts objs by the field at path (namespace and name break
// ties and are the order when path is empty). Numbers sort as numbers,
// everything else as text; objects without the field come first, as in
// kubectl.
func sortObjects(objs []*unstructured.Unstructured, path []string) {
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		if len(path) > 0 {
			if c := compareField(a, b, path); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
}

func compareField(a, b *unstructured.Unstructured, path []string) int {
	va, okA, _ := unstructured.NestedFieldNoCopy(a.Object, path...)
	vb, okB, _ := unstructured.NestedFieldNoCopy(b.Object, path...)
	switch {
	case !okA && !okB:
		return 0
	case !okA:
		return -1
	case !okB:
		return 1
	}
	if fa, ok := number(va); ok {
		if fb, ok := number(vb); ok {
			return cmp.Compare(fa, fb)
		}
	}
	return cmp.Compare(fmt.Sprint(va), fmt.Sprint(vb))
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

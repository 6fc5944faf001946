package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kinformer/kinformer/cache"
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

// inMetadata reports whether path reads only an object's metadata, which
// the metadata-only sources serve.
func inMetadata(path []string) bool {
	return len(path) == 0 || path[0] == "metadata"
}

// sortObjects sorts full objects by the field at path (see sortBy).
func sortObjects(objs []*unstructured.Unstructured, path []string) {
	sortBy(objs, path, func(u *unstructured.Unstructured) (any, bool) {
		v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
		return v, ok
	})
}

// sortMetadata sorts metadata-only objects by the field at path, which
// must be under metadata (see inMetadata); other paths find nothing.
func sortMetadata(objs []*metav1.PartialObjectMetadata, path []string) {
	sortBy(objs, path, func(p *metav1.PartialObjectMetadata) (any, bool) {
		return metadataField(&p.ObjectMeta, path)
	})
}

// sortRows sorts table rows by the field at path, read from the metadata
// or object the rows were fetched with (see includeObject).
func sortRows(rows []*tableRow, path []string) {
	sortBy(rows, path, func(r *tableRow) (any, bool) {
		v, ok, _ := unstructured.NestedFieldNoCopy(r.object, path...)
		return v, ok
	})
}

// metadataField reads path (metadata.…) from m, with the value an
// unstructured object would hold there, so that every source sorts alike.
func metadataField(m *metav1.ObjectMeta, path []string) (any, bool) {
	if len(path) < 2 || path[0] != "metadata" {
		return nil, false
	}
	if len(path) == 2 { // the common ones, without converting the whole object
		switch path[1] {
		case "name":
			return m.Name, true
		case "namespace":
			return m.Namespace, m.Namespace != ""
		case "resourceVersion":
			return m.ResourceVersion, true
		case "creationTimestamp":
			return m.CreationTimestamp.UTC().Format(time.RFC3339), !m.CreationTimestamp.IsZero()
		}
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(m)
	if err != nil {
		return nil, false
	}
	v, ok, _ := unstructured.NestedFieldNoCopy(u, path[1:]...)
	return v, ok
}

// sortBy sorts objs by the value field finds at path, as kubectl's
// --sort-by does: numbers, and strings that are quantities ("997", "1000",
// "1Gi", "500m"), by value; other strings in natural order, digit runs
// compared as numbers ("web-9" before "web-10"). Objects without the field
// come first. Where kubectl compares a quantity with other text as text, a
// comparison that can go round in circles ("10" < "2Gi" < "5x" < "10"),
// values here come before text, so the order is total and does not depend
// on the order the objects came in. Namespace, then name, break ties and
// are the whole order when path is empty.
func sortBy[T cache.Object](objs []T, path []string, field func(T) (any, bool)) {
	// Namespace and name are unique, so an unstable sort gives the one
	// order there is; pdqsort also takes the cache's mostly sorted lists in
	// near-linear time.
	byKey := func(a, b T) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	}
	if len(path) == 0 {
		slices.SortFunc(objs, byKey)
		return
	}
	keys := make([]sortKey, len(objs))
	perm := make([]int, len(objs))
	for i, o := range objs {
		v, ok := field(o)
		keys[i], perm[i] = newSortKey(v, ok), i
	}
	slices.SortFunc(perm, func(a, b int) int {
		return cmp.Or(compareKeys(keys[a], keys[b]), byKey(objs[a], objs[b]))
	})
	sorted := make([]T, len(objs))
	for i, p := range perm {
		sorted[i] = objs[p]
	}
	copy(objs, sorted)
}

// sortKey is one object's value at the sort path, parsed once.
type sortKey struct {
	class keyClass
	// isNum: num holds a number (compared as a float with another number).
	isNum bool
	num   float64
	// quantity is the value of a number or quantity (classValue).
	quantity resource.Quantity
	// text is the value of anything else (classText).
	text string
}

// keyClass orders kinds of values: absent, then values, then text.
type keyClass int

const (
	classAbsent keyClass = iota
	classValue
	classText
)

func newSortKey(v any, ok bool) sortKey {
	if !ok || v == nil {
		return sortKey{}
	}
	k := sortKey{class: classText}
	switch n := v.(type) {
	case int64:
		k.setNum(float64(n))
	case int:
		k.setNum(float64(n))
	case float64:
		k.setNum(n)
	case json.Number:
		if f, err := strconv.ParseFloat(string(n), 64); err == nil {
			k.setNum(f)
		} else {
			k.text = string(n)
		}
	case bool:
		k.text = strconv.FormatBool(n) // false before true
	case string:
		k.text = n
		if q, err := resource.ParseQuantity(n); err == nil {
			k.class, k.quantity = classValue, q
		}
	default:
		k.text = fmt.Sprint(n)
	}
	return k
}

func (k *sortKey) setNum(f float64) {
	k.text = strconv.FormatFloat(f, 'f', -1, 64)
	if q, err := resource.ParseQuantity(k.text); err == nil {
		k.class, k.isNum, k.num, k.quantity = classValue, true, f, q
	}
}

func compareKeys(a, b sortKey) int {
	if c := cmp.Compare(a.class, b.class); c != 0 || a.class == classAbsent {
		return c
	}
	switch {
	case a.class == classText:
		return naturalCompare(a.text, b.text)
	case a.isNum && b.isNum:
		return cmp.Compare(a.num, b.num)
	}
	return a.quantity.Cmp(b.quantity)
}

// naturalCompare orders a and b as text, except that runs of digits compare
// as numbers: "web-9" < "web-10", "v1.9" < "v1.10". Equal numbers with more
// leading zeros come after ("07" > "7"), so that only equal strings
// compare equal.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := isDigit(a[0]), isDigit(b[0])
		switch {
		case da && db:
			na, ra := digitRun(a)
			nb, rb := digitRun(b)
			ta, tb := strings.TrimLeft(na, "0"), strings.TrimLeft(nb, "0")
			if c := cmp.Or(cmp.Compare(len(ta), len(tb)), cmp.Compare(ta, tb), cmp.Compare(len(na), len(nb))); c != 0 {
				return c
			}
			a, b = ra, rb
		case da != db:
			return cmp.Compare(a[0], b[0])
		default:
			if a[0] != b[0] {
				return cmp.Compare(a[0], b[0])
			}
			a, b = a[1:], b[1:]
		}
	}
	return cmp.Compare(len(a), len(b))
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digitRun splits s, which starts with a digit, after its leading digits.
func digitRun(s string) (digits, rest string) {
	i := 1
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

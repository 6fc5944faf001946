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
// the part of kubectl's JSONPath that names one value per object:
// "{.spec.containers[0].image}", or without braces or the leading dot;
// steps are field names (".image", or "['app.kubernetes.io/name']" for a
// key with dots), and array indexes ("[0]"; "[-1]" is the last element).
// Wildcards, filters, slices, unions and recursive descent, which may name
// several values, are refused with an error saying so.
//
// In the path, a step is a field name, or an index written "[N]" (which
// no field name given in brackets can be confused with: a bracketed key
// is stored without its brackets).
func parseSortBy(expr string) ([]string, error) {
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "{") && strings.HasSuffix(e, "}") {
		e = e[1 : len(e)-1]
	}
	if e == "" {
		return nil, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("--sort-by %q: %s; use a path to one field such as .metadata.name or {.spec.containers[0].image}", expr, why)
	}
	if !strings.HasPrefix(e, ".") && !strings.HasPrefix(e, "[") {
		e = "." + e
	}
	var path []string
	for e != "" {
		switch e[0] {
		case '.':
			e = e[1:]
			n := strings.IndexAny(e, ".[")
			if n < 0 {
				n = len(e)
			}
			name := e[:n]
			if name == "" {
				return nil, bad("an empty field name")
			}
			if strings.ContainsAny(name, "*?@()]{},:'\"") {
				return nil, bad(fmt.Sprintf("%q is not a field name (wildcards, filters and unions are not supported)", name))
			}
			path, e = append(path, name), e[n:]
		case '[':
			end := strings.IndexByte(e, ']')
			if end < 0 {
				return nil, bad("an unclosed [")
			}
			inner := e[1:end]
			switch {
			case len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0]:
				key := inner[1 : len(inner)-1]
				if key == "" || strings.ContainsAny(key, "'\"") || key[0] == '[' {
					return nil, bad(fmt.Sprintf("[%s] is not one key", inner))
				}
				path = append(path, key)
			default:
				if _, err := strconv.Atoi(inner); err != nil || len(inner) > 10 {
					return nil, bad(fmt.Sprintf("[%s] is not an array index (wildcards, filters and slices are not supported)", inner))
				}
				path = append(path, "["+inner+"]")
			}
			e = e[end+1:]
		default:
			return nil, bad(fmt.Sprintf("unexpected %q", e[:1]))
		}
	}
	return path, nil
}

// fieldAt reads the value at path in v (an unstructured object's content):
// field names index maps, "[N]" steps index arrays (negative from the
// end). ok is false when a step finds nothing.
func fieldAt(v any, path []string) (any, bool) {
	for _, step := range path {
		if i, isIndex := indexStep(step); isIndex {
			a, ok := v.([]any)
			if !ok {
				return nil, false
			}
			if i < 0 {
				i += len(a)
			}
			if i < 0 || i >= len(a) {
				return nil, false
			}
			v = a[i]
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[step]; !ok {
			return nil, false
		}
	}
	return v, true
}

// indexStep returns the index of a "[N]" path step.
func indexStep(step string) (int, bool) {
	if len(step) < 3 || step[0] != '[' || step[len(step)-1] != ']' {
		return 0, false
	}
	i, err := strconv.Atoi(step[1 : len(step)-1])
	return i, err == nil
}

// inMetadata reports whether path reads only an object's metadata, which
// the metadata-only sources serve.
func inMetadata(path []string) bool {
	return len(path) == 0 || path[0] == "metadata"
}

// sortObjects sorts full objects by the field at path (see sortBy).
func sortObjects(objs []*unstructured.Unstructured, path []string) {
	sortBy(objs, path, func(u *unstructured.Unstructured) (any, bool) {
		return fieldAt(u.Object, path)
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
		return fieldAt(r.Object, path)
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
	return fieldAt(u, path[1:])
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

package cli

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// allocBound is what parsing text may allocate: a fixed allowance and a
// multiple of its length, never a number written in it.
func allocBound(text ...string) uint64 {
	n := 0
	for _, s := range text {
		n += len(s)
	}
	return 64<<10 + 512*uint64(n)
}

// -l and --field-selector never panic, fail only with ErrBadSelector, and
// allocate in proportion to their text.
func FuzzSelectors(f *testing.F) {
	for _, s := range [][2]string{{"app=web,tier!=db", "status.phase=Running"}, {"env in (prod,staging)", "metadata.name!=x"},
		{"!x,y", "a==b,c!=d"}, {"app=(web", "x"}, {"n>99999999999999999999", "a=b,"}, {"n<-9223372036854775808", `a\=b=c\,d`},
		{"x in (" + strings.Repeat("a,", 200) + "a)", strings.Repeat("f=v,", 100) + "f=v"}, {"a notin ()", "=="}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, label, field string) {
		var err error
		if n := allocatedBy(func() { err = validateSelectors(label, field) }); n > allocBound(label, field) {
			t.Fatalf("validateSelectors(%q, %q) allocated %d bytes", label, field, n)
		}
		if err != nil && !errors.Is(err, ErrBadSelector) {
			t.Fatalf("validateSelectors(%q, %q): %v is not ErrBadSelector", label, field, err)
		}
	})
}

// --sort-by never panics, allocates in proportion to its text, and a path
// it accepts sorts every kind of source without panicking.
func FuzzSortBy(f *testing.F) {
	for _, s := range []string{"{.metadata.name}", ".status.phase", "metadata.labels.app", "{.items[0]}", "..", "{", "}", "{.a.b.c.d.e.f}",
		".spec.replicas", "metadata.creationTimestamp", "metadata.managedFields.0", "{.metadata.999999999999999999999}"} {
		f.Add(s)
	}
	objs := []*unstructured.Unstructured{
		obj("Pod", "a", "web-10", 0, map[string]any{"spec": map[string]any{"replicas": int64(3)}, "status": map[string]any{"phase": "1Gi"}}),
		obj("Pod", "a", "web-9", 0, map[string]any{"spec": "text", "status": []any{"x"}}),
		obj("Pod", "b", "x", 0, nil),
	}
	f.Fuzz(func(t *testing.T, expr string) {
		var path []string
		var err error
		if n := allocatedBy(func() { path, err = parseSortBy(expr) }); n > allocBound(expr) {
			t.Fatalf("parseSortBy(%q) allocated %d bytes", expr, n)
		}
		if err != nil {
			return
		}
		for _, p := range path {
			if p == "" {
				t.Fatalf("parseSortBy(%q) = %q: an empty step", expr, path)
			}
		}
		sortObjects(objs, path)
		metas := make([]*metav1.PartialObjectMetadata, len(objs))
		rows := make([]*tableRow, len(objs))
		for i, o := range objs {
			metas[i] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: o.GetName(), Labels: map[string]string{"app": "x"}}}
			rows[i] = &tableRow{namespace: o.GetNamespace(), name: o.GetName(), object: o.Object}
		}
		sortMetadata(metas, path)
		sortRows(rows, path)
	})
}

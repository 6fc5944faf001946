package cli

import (
	"errors"
	"net/http"
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
	return 256<<10 + 512*uint64(n)
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
		".spec.replicas", "metadata.creationTimestamp", "metadata.managedFields.0", "{.metadata.999999999999999999999}",
		"{.status[0]}", ".status[-1]", "{.metadata.labels['a.b']}", ".spec[-9999999999]"} {
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
			rows[i] = &tableRow{Namespace: o.GetNamespace(), Name: o.GetName(), Object: o.Object}
		}
		sortMetadata(metas, path)
		sortRows(rows, path)
	})
}

// Resource names, as the commands take them ("pods", "deploy,cm",
// "deployments.v1.apps"), resolve through discovery without panicking or
// allocating in proportion to a number in them: to one of the cluster's
// resources, or to an error a person can act on.
func FuzzResourceNames(f *testing.F) {
	for _, s := range []string{"pods", "po,cm", "deployments.v1.apps", "Deployment", " PODS ", ",,", "pods.", ".apps", "a.b.c.d.e",
		"pods/status", "deploy.v99999999999999999999.apps", "*", "pods,", "ns", "\x00", "pods.v1.", " ", "pods, ,cm"} {
		f.Add(s)
	}
	global := fakeCluster(f, http.NotFound)
	known := map[string]bool{"pods": true, "configmaps": true, "namespaces": true, "deployments": true}
	f.Fuzz(func(t *testing.T, names string) {
		var s *session
		var err error
		// The fake server's allocations count too: the bound is larger
		// than the parsers', but still far below what a count read from
		// the name would cost.
		if n := allocatedBy(func() { s, err = global.connect(t.Context(), []string{names}) }); n > 16*allocBound(names) {
			t.Fatalf("connect(%q) allocated %d bytes", names, n)
		}
		if err != nil {
			var ue *UserError
			if !errors.As(err, &ue) && !strings.HasPrefix(err.Error(), "no resource given") {
				t.Fatalf("connect(%q): %v is not an error a person can act on", names, err)
			}
			return
		}
		for _, tg := range s.targets {
			if !known[tg.res.GVR.Resource] {
				t.Fatalf("connect(%q) resolved %v, which the cluster does not serve", names, tg.res.GVR)
			}
		}
	})
}

package cli

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

func TestCountingSourceCountsPagesAndTotal(t *testing.T) {
	src, err := fake.New(fake.Options[*unstructured.Unstructured]{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		if _, err := src.Create(obj("ConfigMap", "ns", fmt.Sprintf("cm-%02d", i), 0, nil)); err != nil {
			t.Fatal(err)
		}
	}
	p := &syncProgress{}
	cs := &countingSource[*unstructured.Unstructured]{inner: src, p: p}
	page, err := cs.List(t.Context(), listwatch.Options{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if p.items.Load() != 10 || p.total.Load() != 25 {
		t.Errorf("after one page: items %d total %d, want 10 and 25", p.items.Load(), p.total.Load())
	}
	for page.Continue != "" {
		if page, err = cs.List(t.Context(), listwatch.Options{Limit: 10, Continue: page.Continue}); err != nil {
			t.Fatal(err)
		}
	}
	if p.items.Load() != 25 {
		t.Errorf("after every page: items %d, want 25", p.items.Load())
	}
	// A new list starts over.
	if _, err := cs.List(t.Context(), listwatch.Options{}); err != nil || p.items.Load() != 25 || p.total.Load() != 25 {
		t.Errorf("relist: items %d total %d err %v", p.items.Load(), p.total.Load(), err)
	}
}

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

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

func TestEventPrinterHoldsEventsUntilFlushThenStreams(t *testing.T) {
	var out bytes.Buffer
	pt := podTarget("web")
	p := &eventPrinter{w: &out, layout: newTableLayout([]target{pt}, true, false), now: func() time.Time { return testNow }}
	h := p.handlerFor(pt)
	b := obj("Pod", "web", "b", 0, nil)
	a := obj("Pod", "web", "a", 0, nil)
	h.OnAdd(b, true)
	h.OnAdd(a, true)
	h.OnUpdate(b, b) // a change during the sync
	if out.Len() != 0 {
		t.Fatalf("printed before flush: %q", out.String())
	}
	p.flush()
	h.OnDelete(a, false)
	want := []string{"EVENT NAME READY STATUS RESTARTS AGE", "ADDED a 0/0 <none> 0 0s", "ADDED b 0/0 <none> 0 0s",
		"MODIFIED b 0/0 <none> 0 0s", "DELETED a 0/0 <none> 0 0s"}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i := range got {
		got[i] = strings.Join(strings.Fields(got[i]), " ")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := p.error(); err != nil {
		t.Error(err)
	}
}

func TestEventPrinterJSONAndWatchOnly(t *testing.T) {
	var out bytes.Buffer
	pt := podTarget("web")
	p := &eventPrinter{w: &out, output: outputJSON, watchOnly: true, now: func() time.Time { return testNow }}
	h := p.handlerFor(pt)
	h.OnAdd(obj("Pod", "web", "old", 0, nil), true)
	p.flush()
	h.OnAdd(obj("Pod", "web", "new", 0, nil), false)
	var ev struct {
		Type   string `json:"type"`
		Object struct {
			Metadata struct{ Name string } `json:"metadata"`
		} `json:"object"`
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("printed %q, want the new pod only", out.String())
	}
	if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil || ev.Type != "ADDED" || ev.Object.Metadata.Name != "new" {
		t.Errorf("line %q: %+v %v", lines[0], ev, err)
	}
}

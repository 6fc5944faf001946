package kube

import (
	"encoding/json"
	"maps"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/listwatch"
)

// TestLabelsReadAsTheMapTheyWereMadeFrom: every look-up, the iteration,
// Map, String and a JSON round trip agree with the map; selectors match
// a Labels as they match the map.
func TestLabelsReadAsTheMapTheyWereMadeFrom(t *testing.T) {
	for _, m := range []map[string]string{
		nil,
		{"app": "web"},
		{"tier": "front", "app": "web", "app.kubernetes.io/name": "shop", "pod-template-hash": "7d4b9c", "empty": ""},
	} {
		l := LabelsOf(m)
		if l.Len() != len(m) {
			t.Errorf("%v: Len %d", m, l.Len())
		}
		for k, v := range m {
			if got, ok := l.Lookup(k); !ok || got != v || l.Get(k) != v || !l.Has(k) {
				t.Errorf("%v: Lookup(%q) = %q, %v", m, k, got, ok)
			}
		}
		for _, k := range []string{"", "a", "zzz", "app.", "tie"} {
			if _, in := m[k]; !in && (l.Has(k) || l.Get(k) != "") {
				t.Errorf("%v: has %q", m, k)
			}
		}
		var last string
		n := 0
		for k, v := range l.All() {
			if n > 0 && k <= last || m[k] != v {
				t.Errorf("%v: All yielded %q=%q after %q", m, k, v, last)
			}
			last, n = k, n+1
		}
		if n != len(m) || !maps.Equal(l.Map(), m) || (len(m) == 0) != (l.Map() == nil) {
			t.Errorf("%v: All yielded %d, Map %v", m, n, l.Map())
		}
		if want := labels.Set(m).String(); l.String() != want {
			t.Errorf("String %q, want %q", l.String(), want)
		}
		for _, sel := range []string{"app=web", "app!=web", "tier", "!tier", "app in (web, db)"} {
			s, err := labels.Parse(sel)
			if err != nil {
				t.Fatal(err)
			}
			if s.Matches(l) != s.Matches(labels.Set(m)) {
				t.Errorf("%v: selector %q matches the Labels %v, the map %v", m, sel, s.Matches(l), !s.Matches(l))
			}
		}
		data, err := json.Marshal(struct{ L Labels }{l})
		if err != nil {
			t.Fatal(err)
		}
		var back struct{ L Labels }
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.L, l) {
			t.Errorf("%v: JSON %s read back as %v", m, data, back.L)
		}
	}
	var l Labels
	if err := json.Unmarshal([]byte(`["a"]`), &l); err == nil {
		t.Error("a JSON array read as Labels")
	}
}

// TestViewLabelsAreDecodedIntoLabels: a view's ViewMeta.Labels is
// filled by the decoder, in both encodings, and GetLabels gives a map the
// caller may change without changing the view.
func TestViewLabelsAreDecodedIntoLabels(t *testing.T) {
	pods := viewTestPods(1)
	pods[0].Labels = map[string]string{"b": "2", "a": "1", "c": "3"}
	for _, proto := range []bool{true, false} {
		src, err := Source[*testPodView](t.Context(), viewServer(t, proto, pods), SourceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		page, err := src.List(t.Context(), listwatch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		v := page.Items[0]
		if v.Labels.String() != "a=1,b=2,c=3" {
			t.Fatalf("proto %v: labels %v", proto, v.Labels)
		}
		m := v.GetLabels()
		m["a"] = "changed"
		if v.Labels.Get("a") != "1" {
			t.Errorf("proto %v: changing GetLabels' map changed the view", proto)
		}
	}
}

// TestLabelsCompareSemantically: apimachinery's equality.Semantic (which
// the mutation detector uses) compares views holding Labels instead of
// panicking on the unexported pairs, and tells different labels apart.
func TestLabelsCompareSemantically(t *testing.T) {
	a := &testPodView{}
	a.Labels = LabelsOf(map[string]string{"app": "web"})
	b := &testPodView{}
	b.Labels = LabelsOf(map[string]string{"app": "web"})
	if !equality.Semantic.DeepEqual(a, b) || !a.Labels.Equal(b.Labels) {
		t.Error("equal labels compare unequal")
	}
	b.Labels = LabelsOf(map[string]string{"app": "db"})
	if equality.Semantic.DeepEqual(a, b) || a.Labels.Equal(b.Labels) || a.Labels.Equal(Labels{}) {
		t.Error("different labels compare equal")
	}
}

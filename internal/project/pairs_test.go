package project

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPairsKeepMapSemantics: labels arriving out of order and repeated
// (two protobuf messages concatenated merge, a later entry replacing an
// earlier one) end as the full type's map would, sorted by key; so does
// a JSON object with repeated and unsorted keys.
func TestPairsKeepMapSemantics(t *testing.T) {
	plan := podPlan(t)
	first, err := (&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"b": "2", "d": "4"}}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	second, err := (&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "1", "b": "3", "c": "0"}}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	raw := append(first, second...)
	var full corev1.Pod
	if err := full.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	got := plan.New().(*podView)
	if err := plan.DecodeProto(raw, got, NewStrings()); err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "1", "b", "3", "c", "0", "d", "4"}
	if !slices.Equal(got.Labels.kv, want) || !reflect.DeepEqual(got.Labels, pairsOf(full.Labels)) {
		t.Errorf("protobuf: labels %q, want %q", got.Labels.kv, want)
	}
	got = plan.New().(*podView)
	if _, _, err := plan.DecodeJSON([]byte(`{"metadata":{"labels":{"d":"4","b":"2","a":"1","b":"3","c":null}}}`), got, nil); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "1", "b", "3", "c", "", "d", "4"}; !slices.Equal(got.Labels.kv, want) {
		t.Errorf("JSON: labels %q, want %q", got.Labels.kv, want)
	}
}

// TestPairsNeedAMapOfStrings: a pairs field on a path that is not a map
// of strings is refused when the plan is compiled; a struct that only
// looks like a pairs type (untagged) is not one.
func TestPairsNeedAMapOfStrings(t *testing.T) {
	type onString struct {
		Node labelPairs `kube:"spec.nodeName"`
	}
	type onOtherMap struct {
		Limits labelPairs `kube:"spec.overhead"`
	}
	for _, view := range []reflect.Type{reflect.TypeFor[*onString](), reflect.TypeFor[*onOtherMap]()} {
		_, err := CompileGo(view, reflect.TypeFor[*corev1.Pod](), true)
		if fe := (*FieldError)(nil); !errors.As(err, &fe) {
			t.Errorf("%v: %v, want a FieldError", view, err)
		}
	}
	type untagged struct {
		kv []string
	}
	if isPairs(reflect.TypeFor[untagged]()) || !isPairs(reflect.TypeFor[labelPairs]()) {
		t.Error("isPairs does not go by the tag")
	}
}

// TestInsertPair keeps the pairs sorted and keys distinct, whatever the
// order of insertion.
func TestInsertPair(t *testing.T) {
	var kv []string
	for _, e := range [][2]string{{"m", "1"}, {"a", "2"}, {"z", "3"}, {"m", "4"}, {"b", "5"}, {"a", "6"}} {
		kv = insertPair(kv, e[0], e[1])
	}
	if want := []string{"a", "6", "b", "5", "m", "4", "z", "3"}; !slices.Equal(kv, want) {
		t.Errorf("pairs %q, want %q", kv, want)
	}
}

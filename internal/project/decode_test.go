package project

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func podPlan(t testing.TB) *Plan {
	t.Helper()
	p, err := CompileGo(reflect.TypeFor[*podView](), reflect.TypeFor[*corev1.Pod](), true)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDecodeProtoEqualsFullDecodeProjected is the decoder's property:
// decoding a pod's protobuf bytes into the view gives exactly what
// decoding the full pod with its generated Unmarshal and copying the
// fields gives, with and without interning.
func TestDecodeProtoEqualsFullDecodeProjected(t *testing.T) {
	plan := podPlan(t)
	strs := NewStrings()
	for i := range 300 {
		raw, err := realisticPod(i).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var full corev1.Pod
		if err := full.Unmarshal(raw); err != nil {
			t.Fatal(err)
		}
		want := project(&full)
		for _, s := range []*Strings{nil, strs} {
			got := plan.New().(*podView)
			if err := plan.DecodeProto(raw, got, s); err != nil {
				t.Fatalf("pod %d: %v", i, err)
			}
			if !reflect.DeepEqual(*got, want) {
				t.Fatalf("pod %d (interning %v):\n got %+v\nwant %+v", i, s != nil, *got, want)
			}
		}
	}
}

// TestDecodeJSONEqualsFullDecodeProjected: the same for JSON, with the
// object's apiVersion and kind.
func TestDecodeJSONEqualsFullDecodeProjected(t *testing.T) {
	plan := podPlan(t)
	strs := NewStrings()
	for i := range 300 {
		data, err := json.Marshal(realisticPod(i))
		if err != nil {
			t.Fatal(err)
		}
		var full corev1.Pod
		if err := json.Unmarshal(data, &full); err != nil {
			t.Fatal(err)
		}
		want := project(&full)
		got := plan.New().(*podView)
		av, kind, err := plan.DecodeJSON(data, got, strs)
		if err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		if string(av) != "v1" || string(kind) != "Pod" {
			t.Fatalf("pod %d: apiVersion %q kind %q", i, av, kind)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("pod %d:\n got %+v\nwant %+v", i, *got, want)
		}
	}
}

// TestInterningSharesRepeatedStrings: two pods of one app share their
// label values and images, but not their names.
func TestInterningSharesRepeatedStrings(t *testing.T) {
	plan := podPlan(t)
	strs := NewStrings()
	decode := func(i int) *podView {
		raw, _ := realisticPod(i).Marshal()
		v := plan.New().(*podView)
		if err := plan.DecodeProto(raw, v, strs); err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, b := decode(0), decode(97*5) // same app, same variant
	same := func(x, y string) bool { return x != "" && len(x) == len(y) && unsafeData(x) == unsafeData(y) }
	if !same(a.Labels.get("app"), b.Labels.get("app")) || !same(a.Containers[1].Image, b.Containers[1].Image) {
		t.Error("repeated strings are not shared")
	}
	if a.Name == b.Name || same(a.Namespace, b.Namespace) != (a.Namespace == b.Namespace) {
		t.Errorf("names %q %q, namespaces %q %q", a.Name, b.Name, a.Namespace, b.Namespace)
	}
}

func TestDecodeErrorsWrapErrMalformed(t *testing.T) {
	plan := podPlan(t)
	raw, _ := realisticPod(0).Marshal()
	for _, bad := range [][]byte{raw[:len(raw)/2], {0xff}, {0x0a, 0x05, 0x01}, {0x0b}} {
		if err := plan.DecodeProto(bad, plan.New(), nil); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeProto(%x...) = %v, want ErrMalformed", bad[:min(len(bad), 8)], err)
		}
	}
	for _, bad := range []string{`{"metadata":{"name":1}}`, `{"metadata":`, `[]`, `{"spec":{"containers":{}}}`, `{"x":tru}`, `{} x`} {
		if _, _, err := plan.DecodeJSON([]byte(bad), plan.New(), nil); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeJSON(%s) = %v, want ErrMalformed", bad, err)
		}
	}
	if err := plan.DecodeProto(raw, &corev1.Pod{}, nil); err == nil {
		t.Error("decoding into another type succeeded")
	}
}

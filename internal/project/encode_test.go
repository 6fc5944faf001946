package project

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestEncodeProtoDecodesBackToTheSameView is the encoder's property: a
// view decoded from a pod, encoded and decoded again, is equal to the
// first, with and without interning, for views holding every kind of
// field (pointers, lists, maps, times, quantities, whole messages).
func TestEncodeProtoDecodesBackToTheSameView(t *testing.T) {
	plan := podPlan(t)
	if err := plan.CheckEncode(); err != nil {
		t.Fatal(err)
	}
	strs := NewStrings()
	var buf []byte
	for i := range 300 {
		raw, err := realisticPod(i).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		first := plan.New().(*podView)
		if err := plan.DecodeProto(raw, first, nil); err != nil {
			t.Fatal(err)
		}
		buf, err = plan.EncodeProto(buf[:0], first)
		if err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		if len(buf) >= len(raw) {
			t.Errorf("pod %d: the view's encoding is %d bytes, the full pod's %d", i, len(buf), len(raw))
		}
		for _, s := range []*Strings{nil, strs} {
			again := plan.New().(*podView)
			if err := plan.DecodeProto(buf, again, s); err != nil {
				t.Fatalf("pod %d: decode the encoding: %v", i, err)
			}
			if !reflect.DeepEqual(again, first) {
				t.Fatalf("pod %d (interning %v):\n got %+v\nwant %+v", i, s != nil, *again, *first)
			}
		}
	}
}

// A zero view encodes to nothing, and that decodes to a zero view.
func TestEncodeProtoOfAZeroView(t *testing.T) {
	plan := podPlan(t)
	b, err := plan.EncodeProto(nil, plan.New())
	if err != nil || len(b) != 0 {
		t.Fatalf("EncodeProto(zero) = %x, %v; want nothing", b, err)
	}
	v := plan.New().(*podView)
	if err := plan.DecodeProto(b, v, nil); err != nil || !reflect.DeepEqual(*v, podView{}) {
		t.Fatalf("decoded %+v, %v", *v, err)
	}
	if _, err := plan.EncodeProto(nil, &corev1.Pod{}); err == nil {
		t.Error("EncodeProto of another type: no error")
	}
}

// twice reads the containers in two fields: written back, each would
// read both copies.
type twice struct {
	A []containerView `kube:"spec.containers"`
	B []struct {
		Name string `kube:"name"`
	} `kube:"spec.containers"`
}

func TestCheckEncodeRefusesAFieldReadTwice(t *testing.T) {
	p, err := CompileGo(reflect.TypeFor[*twice](), reflect.TypeFor[*corev1.Pod](), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckEncode(); err == nil || !strings.Contains(err.Error(), "spec.containers") {
		t.Fatalf("CheckEncode = %v, want an error naming spec.containers", err)
	}
	json, err := CompileGo(reflect.TypeFor[*podView](), reflect.TypeFor[*corev1.Pod](), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.CheckEncode(); err == nil {
		t.Error("CheckEncode of a JSON-only plan: no error")
	}
}

// A view that reads one more field has another digest, its Go type
// name kept (two types named view, declared in two functions, print
// alike); the same view compiled twice has the same.
func TestDigestNamesWhatAViewReads(t *testing.T) {
	a, b := podPlan(t), podPlan(t)
	if a.Digest() != b.Digest() {
		t.Errorf("one view, two digests: %s %s", a.Digest(), b.Digest())
	}
	f, m := fewerPlan(t), morePlan(t)
	if f.Type().String() != m.Type().String() {
		t.Fatalf("the two views print as %v and %v", f.Type(), m.Type())
	}
	if f.Digest() == m.Digest() {
		t.Errorf("different views, same digest %s", f.Digest())
	}
}

func fewerPlan(t *testing.T) *Plan {
	type view struct {
		Name string `kube:"metadata.name"`
	}
	p, err := CompileGo(reflect.TypeFor[*view](), reflect.TypeFor[*corev1.Pod](), true)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func morePlan(t *testing.T) *Plan {
	type view struct {
		Name string `kube:"metadata.name"`
		Node string `kube:"spec.nodeName"`
	}
	p, err := CompileGo(reflect.TypeFor[*view](), reflect.TypeFor[*corev1.Pod](), true)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

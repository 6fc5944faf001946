package project

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// FuzzDecodeProto feeds the protobuf decoder arbitrary bytes, seeded with
// realistic pods and pieces of them. It must never panic; a failure must
// wrap ErrMalformed; and whatever the generated Unmarshal of the full type
// accepts, the view must hold the same fields (the decoder's property).
func FuzzDecodeProto(f *testing.F) {
	for i := range 4 {
		raw, err := realisticPod(i).Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
		f.Add(raw[:len(raw)/3])
	}
	f.Add([]byte{0x0a, 0x02, 0x0a, 0x00})
	// Two pods concatenated: protobuf merges them, the second's labels
	// joining and replacing the first's (pairs.go's insertions).
	a, _ := realisticPod(0).Marshal()
	b, _ := realisticPod(6).Marshal()
	f.Add(append(a, b...))
	plan := podPlan(f)
	strs := NewStrings()
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := plan.New().(*podView)
		err := plan.DecodeProto(raw, got, strs)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
		var full corev1.Pod
		if full.Unmarshal(raw) != nil {
			return
		}
		if err != nil {
			t.Fatalf("the full type decodes, the view does not: %v", err)
		}
		if want := project(&full); !reflect.DeepEqual(*got, want) {
			t.Fatalf("view %+v, the full pod projected %+v", *got, want)
		}
	})
}

// FuzzDecodeJSON: the same for JSON, seeded with realistic pods.
func FuzzDecodeJSON(f *testing.F) {
	for i := range 4 {
		data, err := json.Marshal(realisticPod(i))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add([]byte(`{"metadata":{"labels":{"a":null}},"spec":{"containers":[null]}}`))
	plan := podPlan(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, err := plan.DecodeJSON(data, plan.New(), nil)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
	})
}

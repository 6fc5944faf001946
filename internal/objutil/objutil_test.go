package objutil

import (
	"reflect"
	"testing"
	"unsafe"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type thing struct{ name string }

type getter interface{ get() string }

func (t *thing) get() string { return t.name }

// isNilUnsafe is the unsafe alternative to IsNil, kept only to measure
// what IsNil gives up by using reflect.
func isNilUnsafe(v any) bool {
	return v == nil || (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1] == nil
}

func TestIsNilMatchesReflect(t *testing.T) {
	var (
		nilPtr *thing
		nilMap map[string]int
		nilFn  func()
		nilIfc getter
		ifcNil getter = nilPtr
	)
	cases := []struct {
		name string
		got  bool
		v    any
	}{
		{"nil pointer", IsNil(nilPtr), nilPtr},
		{"pointer", IsNil(&thing{}), &thing{}},
		{"nil map", IsNil(nilMap), nilMap},
		{"map", IsNil(map[string]int{}), map[string]int{}},
		{"nil func", IsNil(nilFn), nilFn},
		{"nil interface", IsNil(nilIfc), nil},
		{"interface holding nil pointer", IsNil(ifcNil), nilPtr},
		{"struct value", IsNil(thing{}), thing{}},
		{"zero int", IsNil(0), 0},
	}
	for _, c := range cases {
		rv := reflect.ValueOf(c.v)
		want := !rv.IsValid() || (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Map || rv.Kind() == reflect.Func) && rv.IsNil()
		if c.got != want {
			t.Errorf("IsNil(%s) = %v, want %v", c.name, c.got, want)
		}
		if u := isNilUnsafe(c.v); c.v != nil && u != want {
			t.Errorf("isNilUnsafe(%s) = %v, want %v", c.name, u, want)
		}
	}
}

func TestSame(t *testing.T) {
	a, b := &thing{"a"}, &thing{"a"}
	if !Same(a, a) || Same(a, b) {
		t.Fatalf("Same(a, a) = %v, Same(a, b) = %v; want true, false", Same(a, a), Same(a, b))
	}
}

var sink bool

// BenchmarkIsNil and BenchmarkIsNilUnsafe measure what IsNil gives up by
// using reflect.
func BenchmarkIsNil(b *testing.B) {
	p := &thing{}
	for b.Loop() {
		sink = IsNil(p)
	}
}

func BenchmarkIsNilUnsafe(b *testing.B) {
	p := &thing{}
	for b.Loop() {
		sink = isNilUnsafe(p)
	}
}

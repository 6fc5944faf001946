package cache

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kinformer/kinformer/internal/objutil"
)

func TestMetaNamespaceKey(t *testing.T) {
	var nilObj *obj
	tests := []struct {
		name    string
		obj     *obj
		want    string
		wantErr error
	}{
		{"namespaced", newObj("ns", "a", "1"), "ns/a", nil},
		{"cluster scoped", newObj("", "a", "1"), "a", nil},
		{"nil", nilObj, "", ErrInvalidObject},
		{"empty name", newObj("ns", "", "1"), "", ErrInvalidObject},
		{"slash in name", newObj("ns", "a/b", "1"), "", ErrInvalidObject},
		{"slash in namespace", newObj("n/s", "a", "1"), "", ErrInvalidObject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MetaNamespaceKey(tt.obj)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if check := CheckMetaNamespaceKey(tt.obj); fmt.Sprint(check) != fmt.Sprint(err) {
				t.Fatalf("CheckMetaNamespaceKey = %v, MetaNamespaceKey's error %v", check, err)
			}
			if got != tt.want {
				t.Fatalf("key = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNameKey(t *testing.T) {
	if got, err := NameKey(newObj("ns", "a", "1")); err != nil || got != "a" {
		t.Fatalf("NameKey = %q, %v; want \"a\", nil", got, err)
	}
	var nilObj *obj
	if _, err := NameKey(nilObj); !errors.Is(err, ErrInvalidObject) {
		t.Fatalf("NameKey(nil) err = %v, want ErrInvalidObject", err)
	}
	if _, err := NameKey(newObj("", "", "1")); !errors.Is(err, ErrInvalidObject) {
		t.Fatalf("NameKey(empty name) err = %v, want ErrInvalidObject", err)
	}
}

func TestSplitMetaNamespaceKey(t *testing.T) {
	tests := []struct {
		key      string
		ns, name string
		ok       bool
	}{
		{"ns/a", "ns", "a", true},
		{"a", "", "a", true},
		{"", "", "", false},
		{"/a", "", "", false},
		{"ns/", "", "", false},
		{"/", "", "", false},
		{"a/b/c", "", "", false},
		{"ns//a", "", "", false},
	}
	for _, tt := range tests {
		ns, name, err := SplitMetaNamespaceKey(tt.key)
		if tt.ok != (err == nil) {
			t.Errorf("Split(%q) err = %v, want ok=%v", tt.key, err, tt.ok)
			continue
		}
		if !tt.ok {
			var ke *KeyError
			if !errors.Is(err, ErrInvalidKey) || !errors.As(err, &ke) || ke.Key != tt.key {
				t.Errorf("Split(%q) err = %#v, want *KeyError matching ErrInvalidKey", tt.key, err)
			}
			continue
		}
		if ns != tt.ns || name != tt.name {
			t.Errorf("Split(%q) = %q, %q; want %q, %q", tt.key, ns, name, tt.ns, tt.name)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	for _, o := range []*obj{newObj("ns", "a", ""), newObj("", "b", ""), newObj("kube-system", "x.y-z", "")} {
		key, err := MetaNamespaceKey(o)
		if err != nil {
			t.Fatal(err)
		}
		ns, name, err := SplitMetaNamespaceKey(key)
		if err != nil || ns != o.ns || name != o.name {
			t.Errorf("Split(MetaNamespaceKey(%s/%s)) = %q, %q, %v", o.ns, o.name, ns, name, err)
		}
	}
}

// Object implementations of every shape, for TestIsNil.
type (
	valueObj   struct{ name string }
	emptyObj   struct{}
	mapObj     map[string]string
	smallObj   int8
	funcObj    func() string
	wrappedObj struct{ Object }
)

func (o valueObj) GetNamespace() string       { return "" }
func (o valueObj) GetName() string            { return o.name }
func (o valueObj) GetResourceVersion() string { return "" }
func (emptyObj) GetNamespace() string         { return "" }
func (emptyObj) GetName() string              { return "empty" }
func (emptyObj) GetResourceVersion() string   { return "" }
func (m mapObj) GetNamespace() string         { return "" }
func (m mapObj) GetName() string              { return m["name"] }
func (m mapObj) GetResourceVersion() string   { return "" }
func (smallObj) GetNamespace() string         { return "" }
func (s smallObj) GetName() string            { return "small" }
func (smallObj) GetResourceVersion() string   { return "" }
func (funcObj) GetNamespace() string          { return "" }
func (f funcObj) GetName() string             { return f() }
func (funcObj) GetResourceVersion() string    { return "" }

func TestIsNil(t *testing.T) {
	var (
		nilPtr  *obj
		nilMap  mapObj
		nilFunc funcObj
		nilIfc  Object
		ifcNil  Object = nilPtr
		ifcObj  Object = newObj("", "a", "")
	)
	checks := []struct {
		name string
		got  bool
		want bool
	}{
		{"nil pointer", isNil(nilPtr), true},
		{"pointer", isNil(newObj("", "a", "")), false},
		{"nil map", isNil(nilMap), true},
		{"map", isNil(mapObj{"name": "a"}), false},
		{"nil func", isNil(nilFunc), true},
		{"func", isNil(funcObj(func() string { return "a" })), false},
		{"nil interface", isNil(nilIfc), true},
		{"interface holding nil pointer", isNil(ifcNil), true},
		{"interface holding pointer", isNil(ifcObj), false},
		{"struct value", isNil(valueObj{}), false},
		{"zero-sized value", isNil(emptyObj{}), false},
		{"small zero value", isNil(smallObj(0)), false},
		{"struct embedding a nil interface", isNil(wrappedObj{}), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("isNil(%s) = %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, err := MetaNamespaceKey(ifcNil); !errors.Is(err, ErrInvalidObject) {
		t.Errorf("MetaNamespaceKey(interface holding nil) = %v, want ErrInvalidObject", err)
	}
	if key, err := MetaNamespaceKey(valueObj{name: "v"}); err != nil || key != "v" {
		t.Errorf("MetaNamespaceKey(value) = %q, %v", key, err)
	}
}

func TestSameObject(t *testing.T) {
	a, b := newObj("", "a", ""), newObj("", "a", "")
	var nilPtr *obj
	if !objutil.Same(a, a) || objutil.Same(a, b) || objutil.Same(a, nilPtr) || !objutil.Same(nilPtr, nilPtr) {
		t.Fatal("sameObject wrong for pointers")
	}
	if objutil.Same(valueObj{name: "a"}, valueObj{name: "b"}) {
		t.Fatal("sameObject true for different values")
	}
	if !objutil.Same(emptyObj{}, emptyObj{}) {
		t.Log("zero-sized values not recognised as the same (allowed)")
	}
}

package source

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/scheme"
)

// Every listable kind in client-go's scheme resolves to itself, with a list
// type the fast protobuf path can decode.
func TestResolveBuiltinCoversTheScheme(t *testing.T) {
	n := 0
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		if !strings.HasPrefix(typ.PkgPath(), "k8s.io/api/") || strings.HasSuffix(gvk.Kind, "List") ||
			!scheme.Scheme.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind+"List")) {
			continue
		}
		b, err := resolveBuiltin(reflect.PointerTo(typ))
		if err != nil {
			t.Errorf("%v: %v", gvk, err)
			continue
		}
		n++
		if b.gvk != gvk || b.itemsTag == 0 || b.listMetaTag == 0 || b.resource == "" {
			t.Errorf("%v resolved to %+v", gvk, b)
		}
		if !reflect.PointerTo(typ).Implements(reflect.TypeFor[protoMessage]()) {
			t.Errorf("%v has no protobuf Unmarshal", gvk)
		}
	}
	if n < 100 {
		t.Fatalf("only %d built-in kinds resolved", n)
	}
	// Every kind in the scope table exists in the scheme, so a typo in the
	// table cannot hide.
	for gk := range clusterScoped {
		if gk.Group == "apiextensions.k8s.io" || gk.Group == "apiregistration.k8s.io" {
			continue // served by the apiserver, not in client-go's scheme
		}
		found := false
		for gvk := range scheme.Scheme.AllKnownTypes() {
			found = found || gvk.GroupKind() == gk
		}
		if !found {
			t.Errorf("clusterScoped names %v, unknown to the scheme", gk)
		}
	}
}

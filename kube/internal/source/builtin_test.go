package source

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kinformer/kinformer/internal/wire"
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
		// The generated list, not linked by resolveBuiltin, has the
		// protobuf numbers and JSON names that b's list stands in for.
		listObj, err := scheme.Scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err != nil {
			t.Fatal(err)
		}
		list := reflect.TypeOf(listObj).Elem()
		items, _ := list.FieldByName("Items")
		lm, _ := list.FieldByName("ListMeta")
		tm, _ := list.FieldByName("TypeMeta")
		if items.Type != reflect.SliceOf(typ) || wire.Number(items) != b.itemsTag || items.Tag.Get("json") != "items" ||
			wire.Number(lm) != b.listMetaTag || lm.Tag.Get("json") != "metadata,omitempty" ||
			!tm.Anonymous || strings.Split(tm.Tag.Get("json"), ",")[0] != "" || list.NumField() != 3 {
			t.Errorf("%v: list %v is not what listOf and tags 1 and 2 stand for", gvk, list)
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

// A kind of k8s.io/api that the scheme registers without a list (a list,
// a review, options) is refused with the kinds the scheme gives it, as
// when the scheme itself was asked; a type it does not register is
// refused as not registered.
func TestResolveBuiltinRefusesWhatCannotBeListed(t *testing.T) {
	n := 0
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		if !strings.HasPrefix(typ.PkgPath(), "k8s.io/api/") ||
			!strings.HasSuffix(gvk.Kind, "List") && scheme.Scheme.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind+"List")) {
			continue
		}
		n++
		ptr := reflect.PointerTo(typ)
		gvks, _, err := scheme.Scheme.ObjectKinds(reflect.New(typ).Interface().(runtime.Object))
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("kube: %v (%v) is not a resource that can be listed and watched", ptr, gvks)
		if _, err := resolveBuiltin(ptr); err == nil || err.Error() != want {
			t.Errorf("%v: %v, want %s", gvk, err, want)
		}
	}
	if n < 150 {
		t.Fatalf("only %d unlistable kinds tried", n)
	}
	ptr := reflect.TypeFor[*imagepolicyv1alpha1.ImageReview]()
	if _, _, err := scheme.Scheme.ObjectKinds(&imagepolicyv1alpha1.ImageReview{}); err == nil {
		t.Fatalf("%v is in the scheme: pick another unregistered type", ptr)
	}
	_, err := resolveBuiltin(ptr)
	if err == nil || !strings.HasPrefix(err.Error(), "kube: *v1alpha1.ImageReview is not registered in client-go's scheme: ") ||
		!runtime.IsNotRegisteredError(errors.Unwrap(err)) {
		t.Errorf("%v: %v, want not registered", ptr, err)
	}
}

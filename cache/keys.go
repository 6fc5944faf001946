package cache

import (
	"fmt"
	"strings"

	"github.com/kinformer/kinformer/internal/objutil"
)

// MetaNamespaceKey is the default KeyFunc: "namespace/name" for a namespaced
// object and "name" for one whose namespace is empty. It fails with an error
// matching ErrInvalidObject when obj is nil, its name is empty, or its name
// or namespace contains '/' (Kubernetes forbids both), so every key it
// returns can be split back by SplitMetaNamespaceKey.
func MetaNamespaceKey[T Object](obj T) (string, error) {
	if err := CheckMetaNamespaceKey(obj); err != nil {
		return "", err
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	if ns == "" {
		return name, nil
	}
	return ns + "/" + name, nil
}

// CheckMetaNamespaceKey returns the error MetaNamespaceKey would return
// for obj, nil when it would return a key, without building the key: for
// a caller that only needs to know obj can be keyed (a reflector checking
// every object of a list).
func CheckMetaNamespaceKey[T Object](obj T) error {
	if isNil(obj) {
		return fmt.Errorf("%w: nil %T", ErrInvalidObject, obj)
	}
	return checkName(obj.GetNamespace(), obj.GetName())
}

// NameKey is the KeyFunc for cluster-scoped objects: the name alone. It
// ignores the namespace, and fails like MetaNamespaceKey on a nil object or
// a bad name.
func NameKey[T Object](obj T) (string, error) {
	if isNil(obj) {
		return "", fmt.Errorf("%w: nil %T", ErrInvalidObject, obj)
	}
	name := obj.GetName()
	if err := checkName("", name); err != nil {
		return "", err
	}
	return name, nil
}

// SplitMetaNamespaceKey is the inverse of MetaNamespaceKey: "ns/name" gives
// (ns, name) and "name" gives ("", name). Any other key (empty, an empty
// part, more than one '/') fails with a *KeyError matching ErrInvalidKey.
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	i := strings.IndexByte(key, '/')
	if i < 0 {
		if key == "" {
			return "", "", &KeyError{Key: key, Reason: "empty"}
		}
		return "", key, nil
	}
	namespace, name = key[:i], key[i+1:]
	switch {
	case namespace == "":
		return "", "", &KeyError{Key: key, Reason: "empty namespace before '/'"}
	case name == "":
		return "", "", &KeyError{Key: key, Reason: "empty name after '/'"}
	case strings.IndexByte(name, '/') >= 0:
		return "", "", &KeyError{Key: key, Reason: "more than one '/'"}
	}
	return namespace, name, nil
}

func checkName(ns, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name (namespace %q)", ErrInvalidObject, ns)
	case strings.IndexByte(name, '/') >= 0:
		return fmt.Errorf("%w: name %q contains '/'", ErrInvalidObject, name)
	case strings.IndexByte(ns, '/') >= 0:
		return fmt.Errorf("%w: namespace %q contains '/'", ErrInvalidObject, ns)
	}
	return nil
}

// isNil is the one nil check (objutil.IsNil), typed for objects.
func isNil[T Object](obj T) bool { return objutil.IsNil(obj) }

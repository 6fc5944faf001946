package informer

import (
	"errors"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/cache"
)

// Labeled is an object with labels, which every Kubernetes object is.
type Labeled interface {
	cache.Object
	GetLabels() map[string]string
}

// ErrNotFound matches the error Get returns for an object that is not
// cached.
var ErrNotFound = errors.New("not found")

// NotFoundError is returned by Lister.Get and NamespaceLister.Get for an
// object that is not cached. It matches ErrNotFound with errors.Is, and
// apimachinery's apierrors.IsNotFound also recognises it (it carries a
// metav1.Status with reason NotFound), so controllers written against
// client-go's listers keep working.
type NotFoundError struct {
	Namespace, Name string
}

func (e *NotFoundError) Error() string {
	if e.Namespace == "" {
		return fmt.Sprintf("%q not found", e.Name)
	}
	return fmt.Sprintf("%q not found in namespace %q", e.Name, e.Namespace)
}

// Is reports whether target is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Status returns the NotFound status a server would have answered.
func (e *NotFoundError) Status() metav1.Status {
	return metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: e.Error(),
		Details: &metav1.StatusDetails{Name: e.Name},
	}
}

// Lister reads an informer's cache with typed results. It assumes the cache
// is keyed by cache.MetaNamespaceKey (the informer's default). Namespace
// look-ups use the cache.NamespaceIndex index when the cache has it, and
// scan every object otherwise.
//
// Returned objects are shared with the cache and every other reader: they
// must not be mutated (copy first). Returned slices belong to the caller. A
// Lister is a small value, safe for concurrent use and cheap to copy. Create
// it with NewLister.
type Lister[T Labeled] struct {
	cache cache.Reader[T]
}

// NewLister returns a lister over an informer's cache (its Cache method).
func NewLister[T Labeled](c cache.Reader[T]) Lister[T] {
	return Lister[T]{cache: c}
}

// List returns the cached objects whose labels match selector, in no
// particular order. A nil selector matches everything.
func (l Lister[T]) List(selector labels.Selector) ([]T, error) {
	return filterLabels(l.cache.List(), selector), nil
}

// Get returns the cached object called name, for a cluster-scoped type (or
// the key "name" in general). An absent object is a *NotFoundError.
func (l Lister[T]) Get(name string) (T, error) {
	return get(l.cache, "", name)
}

// Namespace returns a lister restricted to namespace.
func (l Lister[T]) Namespace(namespace string) NamespaceLister[T] {
	return NamespaceLister[T]{cache: l.cache, namespace: namespace}
}

// NamespaceLister reads the objects of one namespace. It has the same
// contract as Lister.
type NamespaceLister[T Labeled] struct {
	cache     cache.Reader[T]
	namespace string
}

// List returns the namespace's cached objects whose labels match selector,
// in no particular order. A nil selector matches everything. The namespace
// "" (metav1.NamespaceAll) lists every namespace.
func (n NamespaceLister[T]) List(selector labels.Selector) ([]T, error) {
	if n.namespace == metav1.NamespaceAll {
		return filterLabels(n.cache.List(), selector), nil
	}
	objs, err := n.cache.ByIndex(cache.NamespaceIndex, n.namespace)
	if err != nil {
		if !errors.Is(err, cache.ErrIndexNotFound) {
			return nil, err
		}
		objs = n.cache.List()
		kept := objs[:0]
		for _, obj := range objs {
			if obj.GetNamespace() == n.namespace {
				kept = append(kept, obj)
			}
		}
		clear(objs[len(kept):])
		objs = kept
	}
	return filterLabels(objs, selector), nil
}

// Get returns the namespace's cached object called name. An absent object
// is a *NotFoundError. In the namespace "", it is Lister.Get. It builds no
// key and allocates nothing for an object that is found.
func (n NamespaceLister[T]) Get(name string) (T, error) {
	return get(n.cache, n.namespace, name)
}

// get looks up the key "namespace/name" ("name" when namespace is empty)
// without building it.
func get[T Labeled](c cache.Reader[T], namespace, name string) (T, error) {
	obj, exists := c.GetByNamespaceName(namespace, name)
	if !exists {
		var zero T
		return zero, &NotFoundError{Namespace: namespace, Name: name}
	}
	return obj, nil
}

// filterLabels keeps, in place, the objects of objs (which the caller owns)
// whose labels match selector.
func filterLabels[T Labeled](objs []T, selector labels.Selector) []T {
	if selector == nil || selector.Empty() {
		return objs
	}
	kept := objs[:0]
	for _, obj := range objs {
		if selector.Matches(labels.Set(obj.GetLabels())) {
			kept = append(kept, obj)
		}
	}
	clear(objs[len(kept):])
	return kept
}

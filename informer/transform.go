package informer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
)

// managedFieldsSetter is implemented by every Kubernetes object: typed
// ones through metav1.ObjectMeta, unstructured and metadata-only ones
// directly.
type managedFieldsSetter interface {
	SetManagedFields(managedFields []metav1.ManagedFieldsEntry)
}

// DropManagedFields is a transform (Options.Transform,
// kube.InformerOptions.Transform) that clears metadata.managedFields, which
// controllers rarely read and which often make up a large part of an
// object's memory. It modifies obj in place, which transforms may do: the
// object is not shared yet. Objects without managed fields pass unchanged.
func DropManagedFields[T cache.Object](obj T) (T, error) {
	if s, ok := any(obj).(managedFieldsSetter); ok {
		s.SetManagedFields(nil)
	}
	return obj, nil
}

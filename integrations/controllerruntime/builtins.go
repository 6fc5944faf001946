package controllerruntime

import (
	"context"
	"fmt"
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
)

// builtinEntries makes the informers of the built-in types served by
// kinformer's typed source (protobuf, interned strings), by kind. Built-in
// kinds not listed here are served like custom resources (newConvertedEntry).
// Go cannot make a generic type from a reflect.Type, so each type is named
// here once.
var builtinEntries = map[schema.GroupVersionKind]func(entryConfig) (entry, error){}

func init() {
	register[*corev1.Pod]()
	register[*corev1.ConfigMap]()
	register[*corev1.Secret]()
	register[*corev1.Service]()
	register[*corev1.Endpoints]()
	register[*corev1.Namespace]()
	register[*corev1.Node]()
	register[*corev1.ServiceAccount]()
	register[*corev1.PersistentVolumeClaim]()
	register[*corev1.PersistentVolume]()
	register[*corev1.Event]()
	register[*corev1.LimitRange]()
	register[*corev1.ResourceQuota]()
	register[*corev1.ReplicationController]()
	register[*corev1.PodTemplate]()
	register[*appsv1.Deployment]()
	register[*appsv1.ReplicaSet]()
	register[*appsv1.StatefulSet]()
	register[*appsv1.DaemonSet]()
	register[*appsv1.ControllerRevision]()
	register[*batchv1.Job]()
	register[*batchv1.CronJob]()
	register[*networkingv1.Ingress]()
	register[*networkingv1.IngressClass]()
	register[*networkingv1.NetworkPolicy]()
	register[*rbacv1.Role]()
	register[*rbacv1.RoleBinding]()
	register[*rbacv1.ClusterRole]()
	register[*rbacv1.ClusterRoleBinding]()
	register[*coordinationv1.Lease]()
	register[*discoveryv1.EndpointSlice]()
	register[*storagev1.StorageClass]()
	register[*storagev1.CSIDriver]()
	register[*storagev1.CSINode]()
	register[*storagev1.VolumeAttachment]()
	register[*policyv1.PodDisruptionBudget]()
	register[*autoscalingv2.HorizontalPodAutoscaler]()
	register[*schedulingv1.PriorityClass]()
	register[*admissionregistrationv1.MutatingWebhookConfiguration]()
	register[*admissionregistrationv1.ValidatingWebhookConfiguration]()
	register[*certificatesv1.CertificateSigningRequest]()
	register[*eventsv1.Event]()
	register[*nodev1.RuntimeClass]()
}

func register[T client.Object]() {
	obj := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) != 1 {
		panic(fmt.Sprintf("kinds of %T: %v %v", obj, gvks, err)) // a type above client-go does not know: a programming error
	}
	builtinEntries[gvks[0]] = func(cfg entryConfig) (entry, error) {
		cfg.prepare = clearTypeMeta
		return newTypedEntry(cfg, func(set shard.Set) (listwatch.ListerWatcher[T], error) {
			// A source of a built-in type makes no request when it is made.
			return kube.Source[T](context.Background(), cfg.restConfig, cfg.sourceOptions(set))
		})
	}
}

// clearTypeMeta empties obj's apiVersion and kind. controller-runtime's
// cache keeps Go-typed objects without them (its decoder clears them), so
// handlers, transforms and UnsafeDisableDeepCopy reads see them empty;
// kinformer's typed source fills them in, and this takes them out again
// before the object is cached. Reads with a deep copy set them on the copy,
// as controller-runtime's do.
func clearTypeMeta(obj client.Object) {
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
}

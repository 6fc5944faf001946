package scenario

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/testenv"
)

// The ReplicaSets of the million scenario. A million pods do not fit this
// machine: the kube-apiserver keeps every pod in informers of its own (its
// service-account token authenticator and the PodSecurity admission
// plugin ask its shared informer factory for a pod lister), about 20 KB
// of RSS per pod whatever its watch cache. Nothing in the apiserver
// informs on ReplicaSets, and a ReplicaSet is as realistic an object for
// an informer: the Deployment controller keeps one per rollout, each with
// a whole pod template. So the scenario runs on sidecarReplicaSet, the
// ReplicaSet a Deployment of sidecarPod's pod would own.

// sidecarReplicaSet is ReplicaSet i: what the Deployment controller
// writes for a Deployment whose pod template is sidecarPod i's (labels,
// annotations, two containers, volumes), owned by that Deployment, with
// three replicas all available. Created through the apiserver (a create
// and a status update by kube-controller-manager) it carries
// managedFields of two operations.
func sidecarReplicaSet(i int) *appsv1.ReplicaSet {
	p := sidecarPod(i, 0)
	app := p.Labels["app"]
	deploy := app + "-" + strconv.Itoa(i)
	hash := fmt.Sprintf("%010x", uint64(uint32(i)*2654435761)<<8|uint64(i&255))[:10]
	labels := map[string]string{}
	for k, v := range p.Labels {
		labels[k] = v
	}
	labels["pod-template-hash"] = hash
	spec := p.Spec
	spec.NodeName = ""
	return &appsv1.ReplicaSet{
		TypeMeta: metav1.TypeMeta{Kind: "ReplicaSet", APIVersion: "apps/v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              deploy + "-" + hash,
			Namespace:         p.Namespace,
			UID:               types.UID(fmt.Sprintf("%08x-0000-4000-9000-%012x", i, i)),
			Generation:        1,
			CreationTimestamp: podEpoch,
			Labels:            labels,
			Annotations: map[string]string{
				"deployment.kubernetes.io/desired-replicas": "3",
				"deployment.kubernetes.io/max-replicas":     "4",
				"deployment.kubernetes.io/revision":         strconv.Itoa(1 + i%5),
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         "apps/v1",
				Kind:               "Deployment",
				Name:               deploy,
				UID:                types.UID(fmt.Sprintf("%08x-0000-4000-a000-%012x", i, i)),
				Controller:         ptr(true),
				BlockOwnerDeletion: ptr(true),
			}},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr(int32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app, "pod-template-hash": hash}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: p.Annotations},
				Spec:       spec,
			},
		},
		Status: appsv1.ReplicaSetStatus{
			Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, ObservedGeneration: 1,
		},
	}
}

// replicaSetManager is the field manager of the API-created ReplicaSets:
// the Deployment controller's process.
const replicaSetManager = "kube-controller-manager"

// createReplicaSets creates ReplicaSets 0..n-1 through the API, each a
// create and a status update (two managedFields entries), skipping those
// that exist.
func createReplicaSets(ctx context.Context, cs kubernetes.Interface, n int) error {
	if err := createNamespaces(ctx, cs, min(n, podNamespaces)); err != nil {
		return err
	}
	return testenv.Parallel(ctx, n, 0, func(ctx context.Context, i int) error {
		want := sidecarReplicaSet(i)
		rs := want.DeepCopy()
		rs.UID, rs.CreationTimestamp, rs.Generation = "", metav1.Time{}, 0
		rs.Status = appsv1.ReplicaSetStatus{}
		rsc := cs.AppsV1().ReplicaSets(rs.Namespace)
		created, err := rsc.Create(ctx, rs, metav1.CreateOptions{FieldManager: replicaSetManager})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("create ReplicaSet %d: %w", i, err)
		}
		created.Status = want.Status
		created.Status.ObservedGeneration = created.Generation
		if _, err := rsc.UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: replicaSetManager}); err != nil {
			return fmt.Errorf("update status of ReplicaSet %d: %w", i, err)
		}
		return nil
	})
}

// storedSidecarReplicaSet is sidecarReplicaSet i as the apiserver would
// have stored it, made from t, the API-created ReplicaSet of the same app
// (i % sidecarTemplates): i's identity, labels, annotations, owner,
// selector, and the template's labels, annotations, images and arguments
// (the proxy's name the namespace). Of the values that differ between the
// two, the managedFields name only the owner's uid (ownerReferences are
// keyed by it), which is rewritten.
func storedSidecarReplicaSet(t *appsv1.ReplicaSet, i int) *appsv1.ReplicaSet {
	want := sidecarReplicaSet(i)
	rs := t.DeepCopy()
	rs.ResourceVersion = ""
	rs.Name, rs.Namespace, rs.UID = want.Name, want.Namespace, want.UID
	rs.Labels, rs.Annotations, rs.OwnerReferences = want.Labels, want.Annotations, want.OwnerReferences
	rs.Spec.Selector = want.Spec.Selector
	rs.Spec.Template.Labels, rs.Spec.Template.Annotations = want.Spec.Template.Labels, want.Spec.Template.Annotations
	for k := range rs.Spec.Template.Spec.Containers {
		c, w := &rs.Spec.Template.Spec.Containers[k], want.Spec.Template.Spec.Containers[k]
		c.Image, c.Args = w.Image, w.Args
	}
	owner := strings.NewReplacer(string(t.OwnerReferences[0].UID), string(want.OwnerReferences[0].UID))
	for k := range rs.ManagedFields {
		if f := rs.ManagedFields[k].FieldsV1; f != nil {
			f.Raw = []byte(owner.Replace(string(f.Raw)))
		}
	}
	return rs
}

// ReplicaSetView is the projected ReplicaSet of the million scenario:
// what a controller of rollouts reads (kube.ViewMeta's identity, labels
// and owners; the desired and available replicas; the template's
// container names and images).
type ReplicaSetView struct {
	kube.ViewOf[*appsv1.ReplicaSet]
	Replicas          *int32          `kube:"spec.replicas"`
	Containers        []ContainerView `kube:"spec.template.spec.containers"`
	ReadyReplicas     int32           `kube:"status.readyReplicas"`
	AvailableReplicas int32           `kube:"status.availableReplicas"`
}

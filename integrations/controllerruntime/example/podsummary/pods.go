package podsummary

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/testenv"
)

// PodsPerNamespace and PodsPerApp shape the pods Populate makes: n pods are
// n/PodsPerApp apps.
const (
	PodsPerNamespace = 1000
	PodsPerApp       = 10
)

// Populate creates pods 0..n-1 in namespaces prefix-0, prefix-1, ...
// (PodsPerNamespace each), labelled app=app-K (PodsPerApp per app), with a
// container like a real workload's, scheduled to one of 50 nodes, and every
// other pod Ready in its status. Pods that exist already are kept.
func Populate(ctx context.Context, cs kubernetes.Interface, prefix string, n int) error {
	for i := 0; i < n; i += PodsPerNamespace {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace(prefix, i)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return testenv.Parallel(ctx, n, 0, func(ctx context.Context, i int) error {
		p := pod(prefix, i)
		created, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("create pod %d: %w", i, err)
		}
		created.Status = corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0." + strconv.Itoa(i%50), PodIP: fmt.Sprintf("10.1.%d.%d", i/250%250, i%250)}
		if i%2 == 0 {
			created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("status of pod %d: %w", i, err)
		}
		return nil
	})
}

func namespace(prefix string, i int) string {
	return prefix + "-" + strconv.Itoa(i/PodsPerNamespace)
}

func pod(prefix string, i int) *corev1.Pod {
	app := "app-" + strconv.Itoa(i/PodsPerApp)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace(prefix, i),
			Name:      app + "-" + strconv.Itoa(i%PodsPerApp),
			Labels:    map[string]string{"app": app, "tier": "web", "pod-template-hash": "5d8f9c7b6"},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/restartedAt": "2026-11-01T10:00:00Z",
			},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-" + strconv.Itoa(i%50),
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "registry.example.com/shop/" + app + ":1.4.2",
				Args:  []string{"--port=8080", "--log-level=info"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env:   []corev1.EnvVar{{Name: "APP", Value: app}, {Name: "MODE", Value: "production"}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}},
			}},
		},
	}
}

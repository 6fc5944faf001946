package scenario

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kinformer/kinformer/bench/internal/podsync"
)

// Realistic pods for the informer scenarios, generated deterministically:
// the same index always gives the same pod, so both sides of a scenario (and
// every run) see identical objects.
//
// A pod looks like one a Deployment made: labels, owner reference,
// annotations, one container with ports, env, resources, probes and volume
// mounts, two volumes, a scheduled node and a Running status with
// conditions. It is about 2.5 KB of JSON, without managedFields.

// podNamespaces spreads pods over this many namespaces.
const podNamespaces = 50

var podEpoch = metav1.Unix(1_767_225_600, 0) // 2026-01-01

// newPod returns pod i at resource version rv.
func newPod(i int, rv int64) *corev1.Pod {
	ns := "ns-" + strconv.Itoa(i%podNamespaces)
	app := "app-" + strconv.Itoa(i%97)
	hash := fmt.Sprintf("%08x", uint32(i)*2654435761)
	name := app + "-" + hash[:6] + "-" + strconv.Itoa(i)
	node := "node-" + strconv.Itoa(i%500)
	ip := fmt.Sprintf("10.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255)
	uid := types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i))
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Namespace:         ns,
			UID:               uid,
			ResourceVersion:   strconv.FormatInt(rv, 10),
			GenerateName:      app + "-" + hash[:6] + "-",
			CreationTimestamp: podEpoch,
			Labels: map[string]string{
				"app":                       app,
				"app.kubernetes.io/name":    app,
				"app.kubernetes.io/part-of": "shop",
				"pod-template-hash":         hash[:6],
				"tier":                      []string{"frontend", "backend", "cache"}[i%3],
			},
			Annotations: map[string]string{
				"prometheus.io/scrape": "true",
				"prometheus.io/port":   "9090",
				"checksum/config":      hash + hash + hash + hash,
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         "apps/v1",
				Kind:               "ReplicaSet",
				Name:               app + "-" + hash[:6],
				UID:                types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i%97, i%97)),
				Controller:         ptr(true),
				BlockOwnerDeletion: ptr(true),
			}},
		},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
				{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
						Path: "token", ExpirationSeconds: ptr(int64(3607))}}}}}},
			},
			Containers: []corev1.Container{{
				Name:  app,
				Image: "registry.example.com/shop/" + app + ":v1.2." + strconv.Itoa(i%7),
				Ports: []corev1.ContainerPort{
					{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
					{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP},
				},
				Env: []corev1.EnvVar{
					{Name: "APP_NAME", Value: app},
					{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
						APIVersion: "v1", FieldPath: "metadata.namespace"}}},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("100m"),
						corev1.ResourceMemory: resource.MustParse("128Mi"),
					},
					Limits: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("500m"),
						corev1.ResourceMemory: resource.MustParse("512Mi"),
					},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "config", MountPath: "/etc/app", ReadOnly: true},
					{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
				},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
				},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr(int64(30)),
			DNSPolicy:                     corev1.DNSClusterFirst,
			ServiceAccountName:            "default",
			NodeName:                      node,
			SchedulerName:                 "default-scheduler",
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
			},
			Priority:           ptr(int32(0)),
			EnableServiceLinks: ptr(true),
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: podEpoch},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: podEpoch},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: podEpoch},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: podEpoch},
			},
			HostIP:    "192.168." + strconv.Itoa(i%500/250) + "." + strconv.Itoa(i%250),
			PodIP:     ip,
			PodIPs:    []corev1.PodIP{{IP: ip}},
			StartTime: &podEpoch,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name:        app,
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: podEpoch}},
				Ready:       true,
				Image:       "registry.example.com/shop/" + app + ":v1.2." + strconv.Itoa(i%7),
				ImageID:     "registry.example.com/shop/" + app + "@sha256:" + hash + hash + hash + hash + hash + hash + hash + hash,
				ContainerID: "containerd://" + hash + hash + hash + hash,
				Started:     ptr(true),
			}},
			QOSClass: corev1.PodQOSBurstable,
		},
	}
}

// podUpdate returns a new version of pod at resource version rv: a shallow
// copy whose metadata (resource version, one annotation) and status (a
// condition's time) changed, sharing everything else with pod. It is how an
// update looks to an informer: a new object, mostly equal to the old one.
func podUpdate(pod *corev1.Pod, rv int64) *corev1.Pod {
	p := *pod
	p.ResourceVersion = strconv.FormatInt(rv, 10)
	p.Generation = pod.Generation + 1
	return &p
}

// podList returns pods 0..n-1 as a list at resource version n, the form a
// client-go source gives its reflector, and pointers to its items, the form
// a kinformer source gives its reflector: the same objects.
func podList(n int) (*corev1.PodList, []*corev1.Pod) {
	list := &corev1.PodList{
		ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(n)},
		Items:    make([]corev1.Pod, n),
	}
	ptrs := make([]*corev1.Pod, n)
	for i := range n {
		list.Items[i] = *newPod(i, int64(i+1))
		ptrs[i] = &list.Items[i]
	}
	return list, ptrs
}

// cacheDigest summarizes a cache's content (podsync.Digest): two caches
// with the same digest hold the same versions of the same objects.
func cacheDigest(pods []*corev1.Pod) string { return podsync.Digest(pods) }

func ptr[V any](v V) *V { return &v }

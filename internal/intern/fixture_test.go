package intern

import (
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// workloadPod returns pod i of a cluster of Deployments: the pod of
// bench/scenario's newPod (97 apps, 7 image versions, 500 nodes, one
// container, two volumes, two tolerations, four conditions) with the
// managedFields the apiserver adds (one entry for the controller's create,
// the same for all pods of an app; one for the kubelet's status, naming
// the pod's IP, so unique).
func workloadPod(i int) *corev1.Pod {
	ns := "ns-" + strconv.Itoa(i%50)
	app := "app-" + strconv.Itoa(i%97)
	hash := fmt.Sprintf("%08x", uint32(i)*2654435761)
	ip := fmt.Sprintf("10.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255)
	image := "registry.example.com/shop/" + app + ":v1.2." + strconv.Itoa(i%7)
	epoch := metav1.Unix(1_767_225_600, 0)
	at := metav1.Unix(1_767_225_600+int64(i), 0)
	ptr := func(b bool) *bool { return &b }
	i64 := func(v int64) *int64 { return &v }
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: app + "-" + hash[:6] + "-" + strconv.Itoa(i), Namespace: ns,
			UID:               types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)),
			ResourceVersion:   strconv.Itoa(1000 + i),
			GenerateName:      app + "-" + hash[:6] + "-",
			CreationTimestamp: epoch,
			Labels: map[string]string{"app": app, "app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "shop",
				"pod-template-hash": hash[:6], "tier": []string{"frontend", "backend", "cache"}[i%3]},
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
				"checksum/config": hash + hash + hash + hash},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-" + hash[:6],
				UID: types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i%97, i%97)), Controller: ptr(true), BlockOwnerDeletion: ptr(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &epoch,
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{".":{},"f:checksum/config":{},"f:prometheus.io/port":{},"f:prometheus.io/scrape":{}},"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/part-of":{},"f:pod-template-hash":{},"f:tier":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"` + fmt.Sprintf("%08x", i%97) + `\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"` + app + `\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"APP_NAME\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"POD_NAMESPACE\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}},"k:{\"containerPort\":9090,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:readinessProbe":{".":{},"f:failureThreshold":{},"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}},"f:periodSeconds":{},"f:successThreshold":{},"f:timeoutSeconds":{}},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{},"f:volumeMounts":{".":{},"k:{\"mountPath\":\"/etc/app\"}":{".":{},"f:mountPath":{},"f:name":{},"f:readOnly":{}}}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{},"f:volumes":{".":{},"k:{\"name\":\"config\"}":{".":{},"f:configMap":{".":{},"f:defaultMode":{},"f:name":{}},"f:name":{}}}}}`)}},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at, Subresource: "status",
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodReadyToStartContainers\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"` + ip + `\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`)}},
			},
		},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
				{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
						Path: "token", ExpirationSeconds: i64(3607)}}}}}},
			},
			Containers: []corev1.Container{{
				Name: app, Image: image,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
					{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{{Name: "APP_NAME", Value: app}, {Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app", ReadOnly: true},
					{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy: corev1.PullIfNotPresent,
			}},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: i64(30), DNSPolicy: corev1.DNSClusterFirst,
			ServiceAccountName: "default", NodeName: "node-" + strconv.Itoa(i%500), SchedulerName: "default-scheduler",
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: i64(300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: i64(300)},
			},
			SecurityContext: &corev1.PodSecurityContext{},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: epoch},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: epoch},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: epoch},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: epoch},
			},
			HostIP: "192.168." + strconv.Itoa(i%500/250) + "." + strconv.Itoa(i%250), PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			StartTime: &epoch,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: app, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: epoch}}, Ready: true,
				Image: image, ImageID: "registry.example.com/shop/" + app + "@sha256:" + hash + hash + hash + hash + hash + hash + hash + hash,
				ContainerID: "containerd://" + hash + hash + hash + hash, Started: ptr(true),
			}},
			QOSClass: corev1.PodQOSBurstable,
		},
	}
}

// workloadRaws returns the protobuf encodings of pods 0..n-1.
func workloadRaws(tb testing.TB, n int) [][]byte {
	tb.Helper()
	raws := make([][]byte, n)
	for i := range raws {
		raw, err := workloadPod(i).Marshal()
		if err != nil {
			tb.Fatal(err)
		}
		raws[i] = raw
	}
	return raws
}

// decodePod is the plain decode, what a source does without an Interner.
func decodePod(raw []byte) (*corev1.Pod, error) {
	p := new(corev1.Pod)
	if err := p.Unmarshal(raw); err != nil {
		return nil, err
	}
	return p, nil
}

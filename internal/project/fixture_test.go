package project

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// meta is a view of an object's metadata, embedded (inlined) in podView.
type meta struct {
	Name            string                  `kube:"metadata.name"`
	Namespace       string                  `kube:"metadata.namespace"`
	UID             types.UID               `kube:"metadata.uid"`
	ResourceVersion string                  `kube:"metadata.resourceVersion"`
	Generation      int64                   `kube:"metadata.generation"`
	Created         metav1.Time             `kube:"metadata.creationTimestamp"`
	Deleted         *metav1.Time            `kube:"metadata.deletionTimestamp"`
	Labels          labelPairs              `kube:"metadata.labels"`
	Owners          []metav1.OwnerReference `kube:"metadata.ownerReferences"`
	Finalizers      []string                `kube:"metadata.finalizers"`
}

// labelPairs is a pairs type, as kube.Labels is.
type labelPairs struct {
	kv []string `kinformer:"pairs"`
}

// get returns the value of key ("" without it).
func (l labelPairs) get(key string) string {
	for i := 0; i+1 < len(l.kv); i += 2 {
		if l.kv[i] == key {
			return l.kv[i+1]
		}
	}
	return ""
}

// pairsOf returns m's entries as labelPairs, sorted by key.
func pairsOf(m map[string]string) labelPairs {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, k, m[k])
	}
	return labelPairs{kv: kv}
}

// podView reads a few fields of every kind the decoder supports.
type podView struct {
	meta
	NodeName   string          `kube:"spec.nodeName"`
	Containers []containerView `kube:"spec.containers"`
	Phase      corev1.PodPhase `kube:"status.phase"`
	Start      *time.Time      `kube:"status.startTime"`
	Grace      *int64          `kube:"spec.terminationGracePeriodSeconds"`
	Priority   int32           `kube:"spec.priority"`
	HostNet    bool            `kube:"spec.hostNetwork"`
	Conditions []struct {
		Type   corev1.PodConditionType `kube:"type"`
		Status string                  `kube:"status"`
	} `kube:"status.conditions"`
	Selector map[string]string `kube:"spec.nodeSelector"`
	Computed int               `kube:"-"`
	private  int
}

type containerView struct {
	Name       string              `kube:"name"`
	Image      string              `kube:"image"`
	Ports      []portView          `kube:"ports"`
	Limits     corev1.ResourceList `kube:"resources.limits"`
	CPU        *resource.Quantity  `kube:"resources.requests.cpu"`
	Privileged *bool               `kube:"securityContext.privileged"`
	Probe      *corev1.Probe       `kube:"readinessProbe"`
	Args       []string            `kube:"args"`
}

type portView struct {
	Port int32  `kube:"containerPort"`
	Name string `kube:"name"`
}

// project copies the fields podView reads out of a full pod: what
// decoding into the view must give.
func project(p *corev1.Pod) podView {
	v := podView{
		meta: meta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			Generation: p.Generation, Created: p.CreationTimestamp, Deleted: p.DeletionTimestamp,
			Labels: pairsOf(p.Labels), Owners: p.OwnerReferences, Finalizers: p.Finalizers},
		NodeName: p.Spec.NodeName, Phase: p.Status.Phase, Grace: p.Spec.TerminationGracePeriodSeconds,
		HostNet: p.Spec.HostNetwork, Selector: p.Spec.NodeSelector,
	}
	if p.Status.StartTime != nil {
		t := p.Status.StartTime.Time
		v.Start = &t
	}
	if p.Spec.Priority != nil {
		v.Priority = *p.Spec.Priority
	}
	for _, c := range p.Status.Conditions {
		v.Conditions = append(v.Conditions, struct {
			Type   corev1.PodConditionType `kube:"type"`
			Status string                  `kube:"status"`
		}{c.Type, string(c.Status)})
	}
	for _, c := range p.Spec.Containers {
		cv := containerView{Name: c.Name, Image: c.Image, Limits: c.Resources.Limits, Probe: c.ReadinessProbe, Args: c.Args}
		if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
			cv.CPU = &q
		}
		if c.SecurityContext != nil {
			cv.Privileged = c.SecurityContext.Privileged
		}
		for _, port := range c.Ports {
			cv.Ports = append(cv.Ports, portView{Port: port.ContainerPort, Name: port.Name})
		}
		v.Containers = append(v.Containers, cv)
	}
	return v
}

// realisticPod returns pod i of a cluster of Deployments, about 7 KB of
// JSON with managedFields and two containers; i varies what is set.
func realisticPod(i int) *corev1.Pod {
	ns := "ns-" + strconv.Itoa(i%50)
	app := "app-" + strconv.Itoa(i%97)
	hash := fmt.Sprintf("%08x", uint32(i)*2654435761)
	epoch := metav1.Unix(1_767_225_600, 0)
	at := metav1.Unix(1_767_225_600+int64(i), 0)
	t, f := true, false
	grace, prio := int64(30), int32(i%3)
	fields := `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"` + app +
		`\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{},"f:resources":{"f:limits":{},"f:requests":{}}}}},"f:status":{"f:conditions":{}},` +
		`"padding":"` + hash + hash + hash + hash + hash + hash + hash + hash + `"}`
	container := func(name, image string, port int32) corev1.Container {
		return corev1.Container{
			Name: name, Image: image, Args: []string{"--port=" + strconv.Itoa(int(port)), "--verbose"},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: port, Protocol: corev1.ProtocolTCP},
				{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{{Name: "APP_NAME", Value: app},
				{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}},
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app", ReadOnly: true}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/healthz", Port: intstr.FromInt32(port), Scheme: corev1.URISchemeHTTP}},
				PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent,
			SecurityContext: &corev1.SecurityContext{Privileged: &f, RunAsNonRoot: &t},
		}
	}
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: app + "-" + hash[:6] + "-" + strconv.Itoa(i), Namespace: ns,
			UID:               types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)),
			ResourceVersion:   strconv.Itoa(1000 + i),
			GenerateName:      app + "-" + hash[:6] + "-",
			Generation:        int64(i % 4),
			CreationTimestamp: epoch,
			Labels: map[string]string{"app": app, "app.kubernetes.io/name": app, "pod-template-hash": hash[:6],
				"tier": []string{"frontend", "backend", "cache"}[i%3]},
			Annotations: map[string]string{"prometheus.io/scrape": "true", "checksum/config": hash + hash + hash + hash},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-" + hash[:6],
				UID: types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i%97, i%97)), Controller: &t, BlockOwnerDeletion: &t}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &epoch,
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at, Subresource: "status",
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}},
			},
		},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}}},
			Containers: []corev1.Container{
				container(app, "registry.example.com/shop/"+app+":v1.2."+strconv.Itoa(i%7), 8080),
				container("sidecar", "registry.example.com/proxy:v3", 15000),
			},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace,
			DNSPolicy: corev1.DNSClusterFirst, ServiceAccountName: "default",
			NodeName: "node-" + strconv.Itoa(i%500), SchedulerName: "default-scheduler", Priority: &prio,
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoExecute}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "192.168.0." + strconv.Itoa(i%250), PodIP: fmt.Sprintf("10.0.%d.%d", (i>>8)&255, i&255),
			StartTime: &at,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: app, Ready: true, RestartCount: int32(i % 3),
				Image: "registry.example.com/shop/" + app, ImageID: "sha256:" + hash + hash,
				ContainerID: "containerd://" + hash + hash + hash,
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}}},
		},
	}
	// Vary what is set, so absent fields are covered too.
	switch i % 5 {
	case 1:
		p.Labels, p.OwnerReferences, p.Spec.NodeSelector = nil, nil, nil
	case 2:
		p.DeletionTimestamp = &at
		p.Finalizers = []string{"example.com/cleanup", "foregroundDeletion"}
	case 3:
		p.Spec.Containers = p.Spec.Containers[:1]
		p.Spec.Containers[0].ReadinessProbe, p.Spec.Containers[0].SecurityContext = nil, nil
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
		p.Status = corev1.PodStatus{Phase: corev1.PodPending}
		p.Spec.Priority, p.Spec.TerminationGracePeriodSeconds = nil, nil
	case 4:
		p.Spec.Containers = nil
		p.Spec.HostNetwork = true
	}
	return p
}

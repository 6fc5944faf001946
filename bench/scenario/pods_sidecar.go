package scenario

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// sidecarPod is the realistic pod of the memory scenarios (issue 13):
// newPod's pod with a second container, a service-mesh style proxy with
// arguments, an environment variable, resources, a volume of its own and
// its own status. Created through the apiserver (a create, then a status
// update, as a kubelet would), it carries managedFields of two managers
// and is about 7 KB of JSON (the memory scenarios print the size of one
// as the server holds it).
func sidecarPod(i int, rv int64) *corev1.Pod {
	p := newPod(i, rv)
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "proxy-certs",
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}})
	proxy := corev1.Container{
		Name:  "proxy",
		Image: "registry.example.com/mesh/proxy:1.24." + strconv.Itoa(i%3),
		Args:  []string{"proxy", "sidecar", "--domain", p.Namespace + ".svc.cluster.local"},
		Env:   []corev1.EnvVar{{Name: "MESH_ID", Value: "cluster.local"}},
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("10m"),
			corev1.ResourceMemory: resource.MustParse("40Mi"),
		}},
		VolumeMounts:             []corev1.VolumeMount{{Name: "proxy-certs", MountPath: "/etc/proxy/certs"}},
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		ImagePullPolicy:          corev1.PullIfNotPresent,
	}
	p.Spec.Containers = append(p.Spec.Containers, proxy)
	status := p.Status.ContainerStatuses[0]
	status.Name = proxy.Name
	status.Image = proxy.Image
	status.ImageID = "registry.example.com/mesh/proxy@sha256:" + status.ImageID[len(status.ImageID)-64:]
	status.ContainerID = "containerd://" + status.ContainerID[len(status.ContainerID)-32:] + "ff00ff00ff00ff00ff00ff00ff00ff00"
	p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, status)
	return p
}

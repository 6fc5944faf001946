package scenario

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/kube"
)

// PodView is the projected pod of the memory scenarios: the fields issue
// 13's example controller reads (name, namespace, uid, resource version,
// labels and owner references through kube.ViewMeta; the node, container
// names and images, the phase), decoded from the wire with nothing else.
type PodView struct {
	kube.ViewOf[*corev1.Pod]
	NodeName   string          `kube:"spec.nodeName"`
	Containers []ContainerView `kube:"spec.containers"`
	Phase      corev1.PodPhase `kube:"status.phase"`
}

// ContainerView is a container of PodView.
type ContainerView struct {
	Name  string `kube:"name"`
	Image string `kube:"image"`
}

// MemOursView is kinformer's projected view: kube.Informer[*PodView] of a
// factory with default options.
const MemOursView Side = "mem-ours-view"

// viewSides are the projected-view sides of the memory scenarios.
var viewSides = []Side{MemOursView}

func isViewSide(s Side) bool { return s == MemOursView }

// viewReports are the lines of the projected view: heap per pod against
// client-go and client-go with its transform, and CPU per pod against
// kinformer's full type.
func viewReports(runs memoryRuns) []Report {
	projected := runs.values(MemOursView, heapPerPod)
	cpu := pairReport("sync-cpu-projected", "us/pod", 0.5, runs.values(MemOursView, cpuPerPod), runs.values(MemOurs, cpuPerPod))
	cpu.Note = "ours= the projected view's sync CPU per pod, clientgo= kinformer's with the full type"
	return []Report{
		runs.withCPU(pairReport("heap-per-pod-projected", "B/pod", projectedTarget, projected, runs.values(MemClientGo, heapPerPod)), MemOursView, MemClientGo),
		runs.withCPU(pairReport("heap-per-pod-projected-vs-transform", "B/pod", 0.3, projected, runs.values(MemClientGoNoMF, heapPerPod)), MemOursView, MemClientGoNoMF),
		runs.withCPU(cpu, MemOursView, MemOurs),
	}
}

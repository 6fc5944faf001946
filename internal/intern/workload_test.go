package intern

import (
	"os/exec"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// templateOf returns a pod template whose strings are fresh copies, so
// that two calls share nothing until interned.
func templateOf() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		ServiceAccountName: strings.Clone("web-sa"),
		Containers:         []corev1.Container{{Name: strings.Clone("web"), Image: strings.Clone("registry.example/web:1.2.3")}},
	}}
}

// TestObjectInternsWorkloadPodTemplates checks that the workloads found by
// name (workload.go) get their pod template interned as the type switch
// did, that a type with the same shape but another name does not, and
// that a nil workload has no pod spec.
func TestObjectInternsWorkloadPodTemplates(t *testing.T) {
	kinds := map[string]func() (any, *corev1.PodSpec){
		"Deployment": func() (any, *corev1.PodSpec) {
			o := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: templateOf()}}
			return o, &o.Spec.Template.Spec
		},
		"ReplicaSet": func() (any, *corev1.PodSpec) {
			o := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Template: templateOf()}}
			return o, &o.Spec.Template.Spec
		},
		"StatefulSet": func() (any, *corev1.PodSpec) {
			o := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: templateOf()}}
			return o, &o.Spec.Template.Spec
		},
		"DaemonSet": func() (any, *corev1.PodSpec) {
			o := &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: templateOf()}}
			return o, &o.Spec.Template.Spec
		},
		"Job": func() (any, *corev1.PodSpec) {
			o := &batchv1.Job{Spec: batchv1.JobSpec{Template: templateOf()}}
			return o, &o.Spec.Template.Spec
		},
		"PodTemplate": func() (any, *corev1.PodSpec) {
			o := &corev1.PodTemplate{Template: templateOf()}
			return o, &o.Template.Spec
		},
	}
	for name, mk := range kinds {
		t.Run(name, func(t *testing.T) {
			in := New(Options{})
			a, as := mk()
			b, bs := mk()
			in.Object(a)
			in.Object(b)
			if !sameString(as.Containers[0].Image, bs.Containers[0].Image) ||
				!sameString(as.ServiceAccountName, bs.ServiceAccountName) {
				t.Error("pod template strings not shared")
			}
			if as.Containers[0].Image != "registry.example/web:1.2.3" || as.ServiceAccountName != "web-sa" {
				t.Errorf("pod template changed: %+v", as)
			}
		})
	}

	// A CronJob holds a pod template deeper down and is not a workload the
	// interner knows: its template keeps its own strings.
	in := New(Options{})
	mkCron := func() *batchv1.CronJob {
		return &batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: templateOf()}}}}
	}
	a, b := mkCron(), mkCron()
	in.Object(a)
	in.Object(b)
	if sameString(a.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image, b.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image) {
		t.Error("a CronJob's pod template was interned")
	}
	if s := workloadPodSpec((*appsv1.Deployment)(nil)); s != nil {
		t.Errorf("a nil Deployment's pod spec: %v", s)
	}
}

// TestPackageDoesNotLinkWorkloadAPIs checks what workload.go is for: this
// package (and so kube) imports no k8s.io/api group but core/v1.
func TestPackageDoesNotLinkWorkloadAPIs(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err) // no go command here
	}
	for pkg := range strings.Lines(string(out)) {
		if pkg = strings.TrimSpace(pkg); strings.HasPrefix(pkg, "k8s.io/api/") && pkg != "k8s.io/api/core/v1" {
			t.Errorf("links %s", pkg)
		}
	}
}

package intern

import (
	"reflect"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// workloads are the types outside core/v1 whose pod template the interner
// knows, by package path and name. They are recognized by name, not by a
// type switch, so that this package (and kube, which imports it) does not
// link k8s.io/api's apps/v1 and batch/v1, nor scheduling/v1alpha3, which
// batch/v1 imports: their generated code is about 0.9 MB of every kube
// program's binary, and a running process pages in nearly all of its
// binary. A program decoding these types links them itself. Measured by
// process-baseline-rss and shard-rss-n4-vs-n1 (bench/README.md).
var workloads = map[string]bool{
	"k8s.io/api/apps/v1.Deployment":  true,
	"k8s.io/api/apps/v1.ReplicaSet":  true,
	"k8s.io/api/apps/v1.StatefulSet": true,
	"k8s.io/api/apps/v1.DaemonSet":   true,
	"k8s.io/api/batch/v1.Job":        true,
}

// templatePaths caches, per type (a reflect.Type), the field index path
// from the struct to its pod template's spec (Spec.Template.Spec), or a
// nil []int for a type that is not a workload. It holds one entry per type
// an interner has seen.
var templatePaths sync.Map

var (
	podTemplateSpecType = reflect.TypeFor[corev1.PodTemplateSpec]()
	podSpecType         = reflect.TypeFor[corev1.PodSpec]()
)

// workloadPodSpec returns the pod spec in obj's pod template when obj is a
// non-nil pointer to one of the workloads, nil otherwise.
func workloadPodSpec(obj any) *corev1.PodSpec {
	t := reflect.TypeOf(obj)
	if t == nil {
		return nil
	}
	cached, ok := templatePaths.Load(t)
	if !ok {
		cached, _ = templatePaths.LoadOrStore(t, templatePath(t))
	}
	path := cached.([]int)
	v := reflect.ValueOf(obj)
	if path == nil || v.IsNil() {
		return nil
	}
	return v.Elem().FieldByIndex(path).Addr().Interface().(*corev1.PodSpec)
}

// templatePath finds Spec.Template.Spec in *W for a workload W: a field
// Spec (a struct) whose field Template is a corev1.PodTemplateSpec. It
// returns nil for any other type.
func templatePath(t reflect.Type) []int {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	w := t.Elem()
	if !workloads[w.PkgPath()+"."+w.Name()] {
		return nil
	}
	spec, ok := w.FieldByName("Spec")
	if !ok || spec.Type.Kind() != reflect.Struct {
		return nil
	}
	tmpl, ok := spec.Type.FieldByName("Template")
	if !ok || tmpl.Type != podTemplateSpecType {
		return nil
	}
	pod, ok := podTemplateSpecType.FieldByName("Spec")
	if !ok || pod.Type != podSpecType {
		return nil
	}
	return append(append(append([]int(nil), spec.Index...), tmpl.Index...), pod.Index...)
}

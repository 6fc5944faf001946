package cli

import (
	"runtime"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/kube"
)

var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// obj builds an unstructured object created age before testNow, with
// fields merged in.
func obj(kind, ns, name string, age time.Duration, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetCreationTimestamp(metav1.NewTime(testNow.Add(-age)))
	return u
}

func podTarget(namespace string) target {
	return target{arg: "po", namespace: namespace, res: kube.Resource{
		GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}}
}

func deployTarget(namespace string, index int) target {
	return target{arg: "deploy", namespace: namespace, index: index, res: kube.Resource{
		GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}}
}

// allocatedBy returns the bytes f allocates, as the runtime counts them
// (other goroutines of the test binary are idle while it runs).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

package project

import (
	"encoding/json"
	"reflect"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kjson "sigs.k8s.io/json"
)

// benchView is the view of the example: metadata a controller
// keys and filters on, the node, container names and images, the phase.
type benchView struct {
	Name            string                  `kube:"metadata.name"`
	Namespace       string                  `kube:"metadata.namespace"`
	UID             types.UID               `kube:"metadata.uid"`
	ResourceVersion string                  `kube:"metadata.resourceVersion"`
	Labels          map[string]string       `kube:"metadata.labels"`
	Owners          []metav1.OwnerReference `kube:"metadata.ownerReferences"`
	NodeName        string                  `kube:"spec.nodeName"`
	Containers      []struct {
		Name  string `kube:"name"`
		Image string `kube:"image"`
	} `kube:"spec.containers"`
	Phase corev1.PodPhase `kube:"status.phase"`
}

// BenchmarkDecodePod decodes a realistic pod (about 7 KB of JSON, with
// managedFields and two containers) into the full corev1.Pod with its
// generated code and into benchView with this package's plans, in
// protobuf and JSON: the figures that justify this package (ns/op,
// allocs/op, B/op).
//
//	go test -run '^$' -bench DecodePod -benchmem -count 5 ./internal/project
func BenchmarkDecodePod(b *testing.B) {
	pod := realisticPod(7)
	raw, err := pod.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	data, err := json.Marshal(pod)
	if err != nil {
		b.Fatal(err)
	}
	plan, err := CompileGo(reflect.TypeFor[*benchView](), reflect.TypeFor[*corev1.Pod](), true)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("proto/full", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			var p corev1.Pod
			if err := p.Unmarshal(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, interned := range []bool{false, true} {
		name := "proto/view"
		var strs *Strings
		if interned {
			name, strs = name+"-interned", NewStrings()
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if err := plan.DecodeProto(raw, plan.New(), strs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("json/full", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var p corev1.Pod
			if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json/view-interned", func(b *testing.B) {
		strs := NewStrings()
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := plan.DecodeJSON(data, plan.New(), strs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPairsHeap justifies pairs types (pairs.go, kube.Labels): the
// live heap a view's labels hold, decoded from 10,000 realistic pods into
// a map[string]string and into pairs, interned as sources do (B/pod).
//
//	go test -run '^$' -bench PairsHeap -count 5 ./internal/project
func BenchmarkPairsHeap(b *testing.B) {
	type mapView struct {
		Labels map[string]string `kube:"metadata.labels"`
	}
	type pairsView struct {
		Labels labelPairs `kube:"metadata.labels"`
	}
	const pods = 10_000
	raws := make([][]byte, pods)
	for i := range raws {
		raw, err := realisticPod(i).Marshal()
		if err != nil {
			b.Fatal(err)
		}
		raws[i] = raw
	}
	for _, view := range []reflect.Type{reflect.TypeFor[*mapView](), reflect.TypeFor[*pairsView]()} {
		plan, err := CompileGo(view, reflect.TypeFor[*corev1.Pod](), true)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(view.Elem().Name(), func(b *testing.B) {
			var perPod float64
			for b.Loop() {
				strs := NewStrings()
				views := make([]any, pods)
				before := liveHeap()
				for i, raw := range raws {
					views[i] = plan.New()
					if err := plan.DecodeProto(raw, views[i], strs); err != nil {
						b.Fatal(err)
					}
				}
				perPod = float64(liveHeap()-before) / pods
				runtime.KeepAlive(views)
				runtime.KeepAlive(strs)
			}
			b.ReportMetric(perPod, "B/pod")
		})
	}
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

package source

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/kinformer/kinformer/internal/listquery"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// richPod is a pod of realistic size (labels, owner, two containers,
// status), about 1.5 KiB of protobuf.
func richPod(i int) *corev1.Pod {
	p := pod("default", fmt.Sprintf("web-%d", i), fmt.Sprint(1000+i))
	p.Labels = map[string]string{"app": "web", "tier": "frontend", "pod-template-hash": "5d8f7c9b6"}
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d8f7c9b6", UID: "0b1c2d3e"}}
	for _, n := range []string{"app", "sidecar"} {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
			Name: n, Image: "registry.example.com/" + n + ":v1.2.3",
			Args: []string{"--port=8080", "--verbose"},
			Env:  []corev1.EnvVar{{Name: "MODE", Value: "production"}, {Name: "REGION", Value: "eu-west-1"}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
		})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: n, Ready: true, Image: "registry.example.com/" + n + ":v1.2.3", ImageID: "sha256:0123456789abcdef"})
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP = "10.0.0.1"
	return p
}

func podListBody(b *testing.B, n int) []byte {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5000"}}
	for i := range n {
		list.Items = append(list.Items, *richPod(i))
	}
	return protoBytes(b, list)
}

// BenchmarkListDecode compares this package's protobuf list decoding with
// apimachinery's protobuf serializer decoding into the typed list (what a
// client-go clientset does), for a list of 1000 pods. Compare allocs/op and
// B/op as well as ns/op.
func BenchmarkListDecode(b *testing.B) {
	body := podListBody(b, 1000)
	c := podCodec(b)
	b.Run("kinformer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			page, err := c.list(body, true)
			if err != nil || len(page.Items) != 1000 {
				b.Fatal(err)
			}
		}
	})
	b.Run("apimachinery", func(b *testing.B) {
		b.ReportAllocs()
		dec := scheme.Codecs.UniversalDeserializer()
		for b.Loop() {
			list := &corev1.PodList{}
			if _, _, err := dec.Decode(body, nil, list); err != nil || len(list.Items) != 1000 {
				b.Fatal(err)
			}
			items := make([]runtime.Object, len(list.Items))
			for i := range list.Items {
				items[i] = &list.Items[i]
			}
		}
	})
}

// BenchmarkWatchDecode measures decoding a protobuf watch stream of 1000
// pod events through the pull decoder.
func BenchmarkWatchDecode(b *testing.B) {
	var stream []byte
	for i := range 1000 {
		stream = append(stream, protoFrame(b, "MODIFIED", richPod(i))...)
	}
	c := podCodec(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		w := newStreamWatch(listquery.NewBody(context.Background(), io.NopCloser(bytes.NewReader(stream)), nil), c, true)
		n := 0
		for {
			_, err := w.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		w.Close()
		if n != 1000 {
			b.Fatalf("%d events", n)
		}
	}
}

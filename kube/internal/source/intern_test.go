package source

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/listquery"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// The interning machinery and its own tests are in internal/intern; these
// check what a Typed source does with it.

// workloadPod is richPod with the managedFields the server adds: the same
// FieldsV1 for every pod, a different time per pod.
func workloadPod(i int) *corev1.Pod {
	p := richPod(i)
	p.Annotations = map[string]string{"prometheus.io/scrape": "true", "checksum/config": fmt.Sprintf("%032x", i)}
	at := metav1.NewTime(time.Unix(int64(1_700_000_000+i), 0))
	p.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:app":{},"f:tier":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{}}}}`)}},
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at, Subresource: "status",
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:phase":{},"f:podIP":{}}}`)}},
	}
	p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	p.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Unix(1_700_000_000, 0))}}
	return p
}

func workloadPods(n int) []corev1.Pod {
	pods := make([]corev1.Pod, n)
	for i := range pods {
		pods[i] = *workloadPod(i)
	}
	return pods
}

func internedPodCodec(t testing.TB, opts Options) *codec[*corev1.Pod] {
	c := podCodec(t)
	internCodec(c, opts)
	return c
}

// sameString reports whether a and b share their bytes.
func sameString(a, b string) bool {
	return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}

var internModes = []Options{{}, {ShareMutableParts: true}, {DisableInterning: true}}

func modeName(opts Options) string {
	return fmt.Sprintf("DisableInterning=%v ShareMutableParts=%v", opts.DisableInterning, opts.ShareMutableParts)
}

// TestInternedListsAndWatchesEqualPlainDecode decodes lists and watch
// streams, protobuf and JSON, in every interning mode, and checks each pod
// equals its plain decode; with interning on, their images share memory.
func TestInternedListsAndWatchesEqualPlainDecode(t *testing.T) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: workloadPods(20)}
	var protoStream, jsonStream []byte
	for i := range list.Items {
		protoStream = append(protoStream, protoFrame(t, "ADDED", &list.Items[i])...)
		jsonStream = append(jsonStream, jsonFrame(t, "ADDED", &list.Items[i])...)
	}
	decode := map[string]func(c *codec[*corev1.Pod]) ([]*corev1.Pod, error){
		"protobuf list": func(c *codec[*corev1.Pod]) ([]*corev1.Pod, error) {
			page, err := c.list(protoBytes(t, list), true)
			return page.Items, err
		},
		"JSON list": func(c *codec[*corev1.Pod]) ([]*corev1.Pod, error) {
			page, err := c.list(jsonBytes(t, list), false)
			return page.Items, err
		},
		"protobuf watch": func(c *codec[*corev1.Pod]) ([]*corev1.Pod, error) { return watchPods(c, protoStream, true) },
		"JSON watch":     func(c *codec[*corev1.Pod]) ([]*corev1.Pod, error) { return watchPods(c, jsonStream, false) },
	}
	for what, decode := range decode {
		plain, err := decode(podCodec(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range internModes {
			pods, err := decode(internedPodCodec(t, opts))
			if err != nil || len(pods) != len(plain) {
				t.Fatalf("%s %s: %d pods, %v", what, modeName(opts), len(pods), err)
			}
			for i := range pods {
				if !reflect.DeepEqual(pods[i], plain[i]) || !apiequality.Semantic.DeepEqual(pods[i], plain[i]) {
					t.Fatalf("%s %s: pod %d differs from its plain decode:\n%v\n%v", what, modeName(opts), i, pods[i], plain[i])
				}
			}
			a, b := pods[1], pods[len(pods)-1]
			shared := sameString(a.Spec.Containers[1].Image, b.Spec.Containers[1].Image) &&
				sameString(a.Labels["app"], b.Labels["app"])
			if shared == opts.DisableInterning {
				t.Errorf("%s %s: strings shared=%v", what, modeName(opts), shared)
			}
		}
	}
}

func watchPods(c *codec[*corev1.Pod], stream []byte, proto bool) ([]*corev1.Pod, error) {
	events, err := decodeAll(c, stream, proto)
	if err != io.EOF {
		return nil, err
	}
	pods := make([]*corev1.Pod, len(events))
	for i, e := range events {
		pods[i] = e.Object
	}
	return pods, nil
}

// mutate changes, in place, the parts of p that ShareMutableParts shares,
// and returns what each of those reads afterwards, by name.
func mutate(p *corev1.Pod) map[string]string {
	c := &p.Spec.Containers[0]
	c.Image = "mutated"
	c.Env[0].Value = "mutated"
	c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("7")
	p.Spec.Volumes[0].Name = "mutated"
	p.Spec.Tolerations[0].Key = "mutated"
	p.Status.Conditions[0].Reason = "mutated"
	p.ManagedFields[0].FieldsV1.Raw[0] = ' '
	return mutated(p)
}

func mutated(p *corev1.Pod) map[string]string {
	cpu := p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
	return map[string]string{
		"container image":     p.Spec.Containers[0].Image,
		"container env value": p.Spec.Containers[0].Env[0].Value,
		"container resources": cpu.String(),
		"volume name":         p.Spec.Volumes[0].Name,
		"toleration key":      p.Spec.Tolerations[0].Key,
		"condition reason":    p.Status.Conditions[0].Reason,
		"managedFields":       string(p.ManagedFields[0].FieldsV1.Raw[:1]),
	}
}

// TestMutationReachesOtherPodsOnlyWithShareMutableParts decodes one pod's
// bytes twice, mutates the first decode in place, and checks the second:
// untouched by default (strings are interned, but a string field can only
// be replaced, never changed in place), and changed in every mutated part
// with ShareMutableParts, which shares the containers, volumes,
// tolerations, conditions, resource lists and FieldsV1 themselves. An
// append to the first pod's containers reaches the second in no mode.
func TestMutationReachesOtherPodsOnlyWithShareMutableParts(t *testing.T) {
	raw, err := workloadPod(1).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range internModes {
		name := modeName(opts)
		c := internedPodCodec(t, opts)
		a, err := c.protoObject(raw)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.protoObject(raw)
		if err != nil {
			t.Fatal(err)
		}
		changed := mutate(a)
		a.Spec.Containers = append(a.Spec.Containers, corev1.Container{Name: "appended"})
		if len(b.Spec.Containers) != 2 {
			t.Errorf("%s: an append to one pod's containers reached another: %d containers", name, len(b.Spec.Containers))
		}
		if opts.ShareMutableParts {
			for what, v := range mutated(b) {
				if v != changed[what] {
					t.Errorf("%s: the %s of one pod changed in place, not the other's: %q", name, what, v)
				}
			}
			continue
		}
		want, _ := podCodec(t).protoObject(raw)
		if !apiequality.Semantic.DeepEqual(b, want) {
			t.Errorf("%s: a mutation of one pod reached another: %q", name, mutated(b))
		}
	}
}

func TestTypedPassesInterningOptions(t *testing.T) {
	body := protoBytes(t, &corev1.PodList{Items: workloadPods(3)})
	cfg := &rest.Config{Host: "http://127.0.0.1:1"}
	for _, opts := range internModes {
		lw, err := Typed[*corev1.Pod](cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		page, err := lw.codec.list(body, true)
		if err != nil {
			t.Fatal(err)
		}
		a, b := page.Items[0], page.Items[2]
		strs := sameString(a.Spec.Containers[0].Image, b.Spec.Containers[0].Image)
		parts := &a.Spec.Containers[0] == &b.Spec.Containers[0]
		if strs == opts.DisableInterning || parts != opts.ShareMutableParts {
			t.Errorf("%s: strings shared=%v, containers shared=%v", modeName(opts), strs, parts)
		}
	}
}

// BenchmarkWatchDecodeInterned is BenchmarkWatchDecode of workload pods in
// each interning mode: compare B/op and ns/op. internal/intern's
// BenchmarkRetained measures what each mode keeps.
func BenchmarkWatchDecodeInterned(b *testing.B) {
	var stream []byte
	for i := range 1000 {
		stream = append(stream, protoFrame(b, "ADDED", workloadPod(i))...)
	}
	for _, opts := range internModes {
		name := "strings"
		switch {
		case opts.DisableInterning:
			name = "off"
		case opts.ShareMutableParts:
			name = "shared-parts"
		}
		b.Run(name, func(b *testing.B) {
			c := internedPodCodec(b, opts)
			b.ReportAllocs()
			for b.Loop() {
				w := newStreamWatch(listquery.NewBody(context.Background(), io.NopCloser(bytes.NewReader(stream)), nil), c, true)
				for {
					if _, err := w.Next(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
				w.Close()
			}
		})
	}
}

package kube

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/listwatch"
)

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

func internedPodCodec(t testing.TB) *codec[*corev1.Pod] {
	c := podCodec(t)
	internCodec(c)
	return c
}

// decodeBoth decodes the same list body with and without interning and
// checks each interned pod equals its un-interned decode.
func decodeBoth(t *testing.T, body []byte, proto bool) []*corev1.Pod {
	t.Helper()
	plain, err := podCodec(t).list(body, proto)
	if err != nil {
		t.Fatal(err)
	}
	interned, err := internedPodCodec(t).list(body, proto)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Items) != len(interned.Items) {
		t.Fatalf("%d items interned, %d plain", len(interned.Items), len(plain.Items))
	}
	for i := range plain.Items {
		if !reflect.DeepEqual(plain.Items[i], interned.Items[i]) || !apiequality.Semantic.DeepEqual(plain.Items[i], interned.Items[i]) {
			t.Fatalf("item %d differs after interning:\n%v\n%v", i, plain.Items[i], interned.Items[i])
		}
	}
	return interned.Items
}

func sameString(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// assertShared checks that pods decoded one by one share their repeated
// values: the same backing arrays, not equal copies.
func assertShared(t *testing.T, pods []*corev1.Pod) {
	t.Helper()
	a, b := pods[1], pods[len(pods)-1]
	for i := range a.ManagedFields {
		ra, rb := a.ManagedFields[i].FieldsV1.Raw, b.ManagedFields[i].FieldsV1.Raw
		if unsafe.SliceData(ra) != unsafe.SliceData(rb) || cap(ra) != len(ra) {
			t.Errorf("managedFields[%d] FieldsV1 not shared (or capacity beyond length)", i)
		}
		if !sameString(a.ManagedFields[i].Manager, b.ManagedFields[i].Manager) {
			t.Errorf("managedFields[%d] manager not shared", i)
		}
		if a.ManagedFields[i].Time == b.ManagedFields[i].Time {
			t.Errorf("managedFields[%d] times (different values) shared", i)
		}
	}
	for k, v := range a.Labels {
		for k2, v2 := range b.Labels {
			if k == k2 && (!sameString(k, k2) || (v == v2 && !sameString(v, v2))) {
				t.Errorf("label %s not shared", k)
			}
		}
	}
	if sameString(a.Annotations["checksum/config"], b.Annotations["checksum/config"]) {
		t.Error("distinct annotation values share memory")
	}
	checks := map[string][2]string{
		"namespace":      {a.Namespace, b.Namespace},
		"owner name":     {a.OwnerReferences[0].Name, b.OwnerReferences[0].Name},
		"image":          {a.Spec.Containers[1].Image, b.Spec.Containers[1].Image},
		"env value":      {a.Spec.Containers[0].Env[1].Value, b.Spec.Containers[0].Env[1].Value},
		"toleration key": {a.Spec.Tolerations[0].Key, b.Spec.Tolerations[0].Key},
		"status image":   {a.Status.ContainerStatuses[0].Image, b.Status.ContainerStatuses[0].Image},
		"phase":          {string(a.Status.Phase), string(b.Status.Phase)},
	}
	for what, s := range checks {
		if !sameString(s[0], s[1]) {
			t.Errorf("%s not shared", what)
		}
	}
	if reflect.ValueOf(a.Spec.Containers[0].Resources.Requests).UnsafePointer() !=
		reflect.ValueOf(b.Spec.Containers[0].Resources.Requests).UnsafePointer() {
		t.Error("resource requests not shared")
	}
	if sameString(a.Name, b.Name) {
		t.Error("names unexpectedly shared")
	}
}

// assertSharedDecode checks that protobuf-decoded pods share the decode of
// their containers, volumes, tolerations and conditions.
func assertSharedDecode(t *testing.T, pods []*corev1.Pod) {
	t.Helper()
	a, b := pods[1], pods[len(pods)-1]
	if &a.Spec.Containers[0] != &b.Spec.Containers[0] || &a.Spec.Volumes[0] != &b.Spec.Volumes[0] ||
		&a.Spec.Tolerations[0] != &b.Spec.Tolerations[0] || &a.Status.Conditions[0] != &b.Status.Conditions[0] {
		t.Error("containers, volumes, tolerations or conditions not shared")
	}
	if cap(a.Spec.Containers) != len(a.Spec.Containers) {
		t.Error("shared slice with capacity beyond its length")
	}
	if &a.Status.ContainerStatuses[0] == &b.Status.ContainerStatuses[0] {
		t.Error("container statuses (not a shared field) shared")
	}
}

func TestInternedProtobufListEqualsPlainDecodeAndShares(t *testing.T) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: workloadPods(50)}
	pods := decodeBoth(t, protoBytes(t, list), true)
	assertShared(t, pods)
	assertSharedDecode(t, pods)
}

// TestInternedPodDecodeEqualsPlainDecode checks the shared decode against
// the plain one on pods whose shared fields are not all alike, and on
// encodings the apiserver does not write (shared fields interleaved with
// others, a spec in two parts), which must decode the same.
func TestInternedPodDecodeEqualsPlainDecode(t *testing.T) {
	var raws [][]byte
	for i := range 30 {
		p := workloadPod(i)
		if i%3 == 0 {
			p.Spec.Containers[0].Image += fmt.Sprint(i)
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
		}
		if i%5 == 0 {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: new(int64(1000))}
		}
		raw, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
	}
	spec := func(fields ...[]byte) []byte { // a Pod whose spec is the given fields
		var b []byte
		for _, f := range fields {
			b = append(b, f...)
		}
		return append(binary.AppendUvarint([]byte{podSpecField<<3 | wireBytes}, uint64(len(b))), b...)
	}
	field := func(num uint64, m interface{ Marshal() ([]byte, error) }) []byte {
		v, _ := m.Marshal()
		return append(binary.AppendUvarint(binary.AppendUvarint(nil, num<<3|wireBytes), uint64(len(v))), v...)
	}
	c1, c2 := &corev1.Container{Name: "a"}, &corev1.Container{Name: "b"}
	node := append([]byte{10<<3 | wireBytes, 1}, 'n')
	raws = append(raws,
		spec(field(2, c1), node, field(2, c2)),                  // containers split by nodeName
		append(spec(field(2, c1)), spec(field(2, c2), node)...), // two specs
		spec(field(2, c1), field(1, &corev1.Volume{Name: "v"}), field(2, c2)),
		[]byte{0x12, 0x05, 0x12, 0x09}, // truncated
	)
	plain, interned := podCodec(t), internedPodCodec(t)
	for i, raw := range raws {
		for range 2 { // the second decode finds its fields in the tables
			want, wantErr := plain.protoObject(raw)
			got, err := interned.protoObject(raw)
			if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
				t.Fatalf("pod %d: interned %v (%v), plain %v (%v)", i, got, err, want, wantErr)
			}
		}
	}
}

// FuzzInternedPodDecode checks that the shared decode of any bytes equals
// the plain decode.
func FuzzInternedPodDecode(f *testing.F) {
	raw, _ := workloadPod(1).Marshal()
	f.Add(raw)
	plain, interned := podCodec(f), internedPodCodec(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, wantErr := plain.protoObject(raw)
		got, err := interned.protoObject(raw)
		if (err != nil) != (wantErr != nil) || (err == nil && !apiequality.Semantic.DeepEqual(got, want)) {
			t.Fatalf("interned %v (%v), plain %v (%v)", got, err, want, wantErr)
		}
	})
}

func TestInternedJSONListEqualsPlainDecodeAndShares(t *testing.T) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: workloadPods(50)}
	pods := decodeBoth(t, jsonBytes(t, list), false)
	assertShared(t, pods)
}

func TestInternedWatchEventsEqualPlainDecodeAndShare(t *testing.T) {
	for _, proto := range []bool{true, false} {
		var stream []byte
		for i := range 20 {
			p := workloadPod(i)
			if proto {
				stream = append(stream, protoFrame(t, "ADDED", p)...)
			} else {
				stream = append(stream, jsonFrame(t, "ADDED", p)...)
			}
		}
		plain, err := decodeAll(podCodec(t), stream, proto)
		if err != io.EOF {
			t.Fatal(err)
		}
		interned, err := decodeAll(internedPodCodec(t), stream, proto)
		if err != io.EOF || len(interned) != len(plain) {
			t.Fatal(err)
		}
		var pods []*corev1.Pod
		for i := range plain {
			if !reflect.DeepEqual(plain[i], interned[i]) {
				t.Fatalf("proto=%v: event %d differs after interning", proto, i)
			}
			pods = append(pods, interned[i].Object)
		}
		assertShared(t, pods)
		if proto {
			assertSharedDecode(t, pods)
		}
	}
}

func TestTypedInternsUnlessDisabled(t *testing.T) {
	body := protoBytes(t, &corev1.PodList{Items: workloadPods(3)})
	cfg := &rest.Config{Host: "http://127.0.0.1:1"}
	for _, disable := range []bool{false, true} {
		lw, err := Typed[*corev1.Pod](cfg, SourceOptions{DisableInterning: disable})
		if err != nil {
			t.Fatal(err)
		}
		page, err := lw.(*source[*corev1.Pod]).codec.list(body, true)
		if err != nil {
			t.Fatal(err)
		}
		a, b := page.Items[0], page.Items[2]
		shared := sameString(a.Spec.Containers[0].Image, b.Spec.Containers[0].Image)
		if shared == disable {
			t.Errorf("DisableInterning=%v: image shared=%v", disable, shared)
		}
	}
}

func TestInternTablesAreBounded(t *testing.T) {
	in := newInterner()
	for i := range 3 * internMaxStrings {
		in.str(fmt.Sprintf("value-%d", i))
		if len(in.strs) > internMaxStrings {
			t.Fatalf("%d strings kept", len(in.strs))
		}
	}
	if long := strings.Repeat("x", internMaxString+1); !sameString(in.str(long), long) || len(in.strs) > internMaxStrings {
		t.Fatal("a long string changed or was kept")
	}
	raw := bytes.Repeat([]byte("f"), 32<<10)
	for i := range 2 * internMaxFieldsBytes / len(raw) {
		copy(raw, fmt.Sprint(i))
		in.fieldsV1(&metav1.FieldsV1{Raw: bytes.Clone(raw)})
		if in.fieldBytes > internMaxFieldsBytes {
			t.Fatalf("%d bytes of FieldsV1 kept", in.fieldBytes)
		}
	}
}

// BenchmarkWatchDecodeInterned is BenchmarkWatchDecode of workload pods,
// with and without interning: compare B/op and ns/op.
func BenchmarkWatchDecodeInterned(b *testing.B) {
	var stream []byte
	for i := range 1000 {
		stream = append(stream, protoFrame(b, "ADDED", workloadPod(i))...)
	}
	for _, intern := range []bool{false, true} {
		b.Run(fmt.Sprintf("intern=%v", intern), func(b *testing.B) {
			c := podCodec(b)
			if intern {
				internCodec(c)
			}
			b.ReportAllocs()
			for b.Loop() {
				w := newStreamWatch(context.Background(), io.NopCloser(bytes.NewReader(stream)), c, true)
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

var _ listwatch.ListerWatcher[*corev1.Pod] = (*source[*corev1.Pod])(nil)

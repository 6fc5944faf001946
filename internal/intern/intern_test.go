package intern

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kinformer/kinformer/internal/wire"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sameString reports whether a and b share their bytes.
func sameString(a, b string) bool {
	return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}

func samePointer(a, b any) bool {
	return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}

// decodeWith decodes raws through a new Interner with opts.
func decodeWith(t *testing.T, opts Options, raws [][]byte) []*corev1.Pod {
	t.Helper()
	in := New(opts)
	pods := make([]*corev1.Pod, len(raws))
	for i, raw := range raws {
		p, err := in.Pod(raw, decodePod)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := decodePod(raw)
		if !reflect.DeepEqual(p, want) || !apiequality.Semantic.DeepEqual(p, want) {
			t.Fatalf("pod %d differs from its plain decode:\n%v\n%v", i, p, want)
		}
		pods[i] = p
	}
	return pods
}

// TestStringsAreSharedAndMutablePartsAreNot checks the default: two pods of
// one app share their repeated strings, and nothing mutable.
func TestStringsAreSharedAndMutablePartsAreNot(t *testing.T) {
	pods := decodeWith(t, Options{}, workloadRaws(t, 2*97*7))
	a, b := pods[1], pods[1+97*7] // same app, same image
	strs := map[string][2]string{
		"namespace":      {pods[1].Namespace, pods[51].Namespace},
		"label key":      {a.Labels["app"], b.Labels["app"]},
		"owner name":     {a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
		"manager":        {a.ManagedFields[0].Manager, b.ManagedFields[0].Manager},
		"image":          {a.Spec.Containers[0].Image, b.Spec.Containers[0].Image},
		"env value":      {a.Spec.Containers[0].Env[0].Value, b.Spec.Containers[0].Env[0].Value},
		"toleration key": {a.Spec.Tolerations[0].Key, b.Spec.Tolerations[0].Key},
		"volume name":    {a.Spec.Volumes[0].Name, b.Spec.Volumes[0].Name},
		"status image":   {a.Status.ContainerStatuses[0].Image, b.Status.ContainerStatuses[0].Image},
		"phase":          {string(a.Status.Phase), string(b.Status.Phase)},
		"condition":      {string(a.Status.Conditions[0].Type), string(b.Status.Conditions[0].Type)},
	}
	for what, s := range strs {
		if !sameString(s[0], s[1]) {
			t.Errorf("%s not shared", what)
		}
	}
	if sameString(a.Annotations["checksum/config"], b.Annotations["checksum/config"]) {
		t.Error("distinct annotation values share memory")
	}
	if samePointer(a.Labels, b.Labels) {
		t.Error("label maps shared")
	}
	mutable := map[string][2]any{
		"FieldsV1":        {a.ManagedFields[0].FieldsV1, b.ManagedFields[0].FieldsV1},
		"FieldsV1.Raw":    {a.ManagedFields[0].FieldsV1.Raw, b.ManagedFields[0].FieldsV1.Raw},
		"resource list":   {a.Spec.Containers[0].Resources.Requests, b.Spec.Containers[0].Resources.Requests},
		"containers":      {a.Spec.Containers, b.Spec.Containers},
		"volumes":         {a.Spec.Volumes, b.Spec.Volumes},
		"tolerations":     {a.Spec.Tolerations, b.Spec.Tolerations},
		"conditions":      {a.Status.Conditions, b.Status.Conditions},
		"securityContext": {a.Spec.SecurityContext, b.Spec.SecurityContext},
	}
	for what, v := range mutable {
		if samePointer(v[0], v[1]) {
			t.Errorf("%s shared without ShareParts", what)
		}
	}
}

// TestSharePartsSharesMutableParts checks Options.ShareParts: the same
// pods also share their FieldsV1, resource lists and spec and status runs,
// handed out with no spare capacity.
func TestSharePartsSharesMutableParts(t *testing.T) {
	pods := decodeWith(t, Options{ShareParts: true}, workloadRaws(t, 2*97*7))
	a, b := pods[1], pods[1+97*7]
	shared := map[string][2]any{
		"FieldsV1":        {a.ManagedFields[0].FieldsV1, b.ManagedFields[0].FieldsV1},
		"resource list":   {a.Spec.Containers[0].Resources.Requests, b.Spec.Containers[0].Resources.Requests},
		"containers":      {a.Spec.Containers, b.Spec.Containers},
		"volumes":         {a.Spec.Volumes, b.Spec.Volumes},
		"tolerations":     {a.Spec.Tolerations, b.Spec.Tolerations},
		"conditions":      {a.Status.Conditions, b.Status.Conditions},
		"securityContext": {a.Spec.SecurityContext, b.Spec.SecurityContext},
	}
	for what, v := range shared {
		if !samePointer(v[0], v[1]) {
			t.Errorf("%s not shared", what)
		}
	}
	if raw := a.ManagedFields[0].FieldsV1.Raw; cap(raw) != len(raw) {
		t.Error("shared FieldsV1 bytes with capacity beyond their length")
	}
	if cap(a.Spec.Containers) != len(a.Spec.Containers) {
		t.Error("shared slice with capacity beyond its length")
	}
	if samePointer(a.ManagedFields[1].FieldsV1, b.ManagedFields[1].FieldsV1) {
		t.Error("distinct FieldsV1 shared")
	}
	if samePointer(a.Status.ContainerStatuses, b.Status.ContainerStatuses) {
		t.Error("container statuses (not a shared field) shared")
	}
	if samePointer(pods[1].Spec.Containers, pods[2].Spec.Containers) {
		t.Error("containers of different apps shared")
	}
}

// TestPodEqualsPlainDecode checks the shared decode against the plain one
// on pods whose shared fields are not all alike, and on encodings the
// apiserver does not write (shared fields interleaved with others, a spec
// in two parts, truncated bytes), which must decode the same.
func TestPodEqualsPlainDecode(t *testing.T) {
	var raws [][]byte
	for i := range 30 {
		p := workloadPod(i % 3)
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
		return append(binary.AppendUvarint([]byte{podSpecField<<3 | wire.Bytes}, uint64(len(b))), b...)
	}
	field := func(num uint64, m interface{ Marshal() ([]byte, error) }) []byte {
		v, _ := m.Marshal()
		return append(binary.AppendUvarint(binary.AppendUvarint(nil, num<<3|wire.Bytes), uint64(len(v))), v...)
	}
	c1, c2 := &corev1.Container{Name: "a"}, &corev1.Container{Name: "b"}
	node := append([]byte{10<<3 | wire.Bytes, 1}, 'n')
	raws = append(raws,
		spec(field(2, c1), node, field(2, c2)),                  // containers split by nodeName
		append(spec(field(2, c1)), spec(field(2, c2), node)...), // two specs
		spec(field(2, c1), field(1, &corev1.Volume{Name: "v"}), field(2, c2)),
		[]byte{0x12, 0x05, 0x12, 0x09}, // truncated
	)
	for _, opts := range []Options{{}, {ShareParts: true}} {
		in := New(opts)
		for i, raw := range raws {
			for range 2 { // the second decode finds its fields in the tables
				want, wantErr := decodePod(raw)
				got, err := in.Pod(raw, decodePod)
				if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
					t.Fatalf("%+v, pod %d: interned %v (%v), plain %v (%v)", opts, i, got, err, want, wantErr)
				}
			}
		}
	}
}

// FuzzPod checks that the interned decode of any bytes, with shared parts,
// equals the plain decode.
func FuzzPod(f *testing.F) {
	raw, _ := workloadPod(1).Marshal()
	f.Add(raw)
	in := New(Options{ShareParts: true})
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, wantErr := decodePod(raw)
		got, err := in.Pod(raw, decodePod)
		if (err != nil) != (wantErr != nil) || (err == nil && !apiequality.Semantic.DeepEqual(got, want)) {
			t.Fatalf("interned %v (%v), plain %v (%v)", got, err, want, wantErr)
		}
	})
}

func TestObjectInternsOtherTypes(t *testing.T) {
	in := New(Options{})
	mk := func() *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace: strings.Clone("ns"), Labels: map[string]string{strings.Clone("app"): strings.Clone("web")}}}
	}
	a, b := mk(), mk()
	in.Object(a)
	in.Object(b)
	if !sameString(a.Namespace, b.Namespace) || !sameString(a.Labels["app"], b.Labels["app"]) {
		t.Error("metadata strings not shared")
	}
}

func TestTablesAreBounded(t *testing.T) {
	in := New(Options{ShareParts: true})
	for i := range 3 * maxStrings {
		in.str(fmt.Sprintf("value-%d", i))
		if len(in.strs) > maxStrings {
			t.Fatalf("%d strings kept", len(in.strs))
		}
	}
	if long := strings.Repeat("x", maxString+1); !sameString(in.str(long), long) || len(in.strs) > maxStrings {
		t.Fatal("a long string changed or was kept")
	}
	raw := bytes.Repeat([]byte("f"), 32<<10)
	for i := range 2 * maxFieldsBytes / len(raw) {
		copy(raw, fmt.Sprint(i))
		in.fieldsV1(&metav1.FieldsV1{Raw: bytes.Clone(raw)})
		if in.fieldBytes > maxFieldsBytes {
			t.Fatalf("%d bytes of FieldsV1 kept", in.fieldBytes)
		}
	}
	for i := range 2 * maxSpanDecodes {
		c := &corev1.Container{Name: fmt.Sprint(i)}
		v, _ := c.Marshal()
		b := append(binary.AppendUvarint([]byte{2<<3 | wire.Bytes}, uint64(len(v))), v...)
		if _, err := in.sharedSpecLocked(b); err != nil {
			t.Fatal(err)
		}
		if len(in.specs) > maxSpanDecodes || in.spanBytes > maxSpanKeys {
			t.Fatalf("%d spec decodes, %d bytes kept", len(in.specs), in.spanBytes)
		}
	}
}

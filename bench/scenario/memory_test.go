package scenario

import (
	"os"
	goruntime "runtime"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

func TestParseStatusKBFindsTheField(t *testing.T) {
	status := "Name:\tbench\nVmPeak:\t  900 kB\nVmHWM:\t  123456 kB\nVmRSS:\t   65432 kB\n"
	for field, want := range map[string]int64{"VmHWM": 123456, "VmRSS": 65432} {
		if got, ok := parseStatusKB(status, field); !ok || got != want {
			t.Errorf("%s = %d, %v; want %d", field, got, ok, want)
		}
	}
	if _, ok := parseStatusKB(status, "VmSwap"); ok {
		t.Error("VmSwap found in a status without it")
	}
}

func TestKeysDigestIgnoresOrder(t *testing.T) {
	a := keysDigest([]string{"ns/a@1", "ns/b@2"})
	if b := keysDigest([]string{"ns/b@2", "ns/a@1"}); a != b {
		t.Errorf("digests differ by order: %s, %s", a, b)
	}
	if c := keysDigest([]string{"ns/a@1", "ns/b@3"}); a == c {
		t.Errorf("different versions, same digest %s", a)
	}
}

func TestSamplerKeepsThePeak(t *testing.T) {
	goruntime.GC() // the live heap is known from the first GC on
	s := startSampler(time.Millisecond)
	p := s.stop()
	if p.heapLive == 0 {
		t.Error("no live heap sampled")
	}
	if _, err := os.Stat("/proc/self/status"); err == nil && p.rssKB == 0 {
		t.Error("no RSS sampled though /proc is there")
	}
}

func TestFloorFindsTheInitialEventsEnd(t *testing.T) {
	pod := sidecarPod(3, 7)
	pod.TypeMeta = metav1.TypeMeta{}
	bookmark := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9",
		Annotations: map[string]string{initialEventsEndAnnotation: "true"}}}
	for _, tc := range []struct {
		typ  string
		obj  runtime.Object
		end  bool
		kind string
	}{
		{"ADDED", pod, false, "ADDED"},
		{"BOOKMARK", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "8"}}, false, "BOOKMARK"},
		{"BOOKMARK", bookmark, true, "BOOKMARK"},
		// Any kind: the bookmark's metadata is its field 1.
		{"BOOKMARK", &appsv1.ReplicaSet{ObjectMeta: bookmark.ObjectMeta}, true, "BOOKMARK"},
		{"BOOKMARK", &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "8"}}, false, "BOOKMARK"},
	} {
		raw, err := runtime.Encode(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		frame, err := (&metav1.WatchEvent{Type: tc.typ, Object: runtime.RawExtension{Raw: raw}}).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		typ, obj, err := watchEventFields(frame)
		if err != nil || string(typ) != tc.kind || len(obj) != len(raw) {
			t.Fatalf("%s: type %q, %d object bytes, %v; want %d bytes", tc.typ, typ, len(obj), err, len(raw))
		}
		if tc.typ != "BOOKMARK" {
			continue
		}
		if end, err := initialEventsEnd(obj); err != nil || end != tc.end {
			t.Errorf("%s %T rv %s: end %v, %v; want %v", tc.typ, tc.obj, tc.obj.(metav1.Object).GetResourceVersion(), end, err, tc.end)
		}
	}
	if _, _, err := watchEventFields([]byte{0x0a, 0x50, 'x'}); err == nil {
		t.Error("a truncated frame parsed")
	}
}

func TestStatusFileReadsVmRSSWithoutAllocating(t *testing.T) {
	s, err := openStatusFile()
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer s.close()
	got, ok := s.kb("VmRSS")
	want, wantOK := readStatusKB("/proc/self/status", "VmRSS")
	if !ok || !wantOK || got <= 0 || got > 2*want || want > 2*got {
		t.Fatalf("VmRSS %d (%v), os.ReadFile's %d (%v): want about the same", got, ok, want, wantOK)
	}
	if a := testing.AllocsPerRun(100, func() { s.kb("VmRSS") }); a != 0 {
		t.Errorf("%v allocations per read, want 0", a)
	}
}

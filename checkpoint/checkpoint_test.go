package checkpoint_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinformer/kinformer/checkpoint"
)

func pods(n int) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprintf("web-%d", i), ResourceVersion: fmt.Sprint(100 + i),
				Labels: map[string]string{"app": "web"}, UID: "uid"},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "nginx",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}}},
		}
	}
	return out
}

func podCodec(t testing.TB) checkpoint.Codec[*corev1.Pod] {
	c, err := checkpoint.DefaultCodec[*corev1.Pod]()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var podID = checkpoint.Identity{Cluster: "7d0c9a4e-cluster-a", Resource: "typed /v1, Resource=pods namespace=shop", Type: checkpoint.TypeName[*corev1.Pod](), Encoding: "protobuf"}

func encode(t testing.TB, snap checkpoint.Snapshot[*corev1.Pod]) []byte {
	var b bytes.Buffer
	if err := checkpoint.Encode(&b, podID, podCodec(t), snap); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTripOfBuiltinAndUnstructuredObjects(t *testing.T) {
	want := pods(50)
	data := encode(t, checkpoint.Snapshot[*corev1.Pod]{ResourceVersion: "4711", Items: want})
	got, err := checkpoint.Decode(bytes.NewReader(data), podID, podCodec(t))
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != "4711" || got.Written.IsZero() || len(got.Items) != 50 {
		t.Fatalf("snapshot rv %q written %v, %d items", got.ResourceVersion, got.Written, len(got.Items))
	}
	for i := range want {
		w, g := want[i], got.Items[i]
		if g.Name != w.Name || g.ResourceVersion != w.ResourceVersion || g.Labels["app"] != "web" ||
			!g.Spec.Containers[0].Resources.Limits.Cpu().Equal(resource.MustParse("250m")) || g.Spec.NodeName != "n1" {
			t.Fatalf("item %d: %+v, want %+v", i, g, w)
		}
	}

	uc, err := checkpoint.DefaultCodec[*unstructured.Unstructured]()
	if err != nil || uc.Name != "json" {
		t.Fatalf("unstructured codec %q, %v", uc.Name, err)
	}
	uid := checkpoint.Identity{Cluster: "c", Resource: "dynamic widgets", Type: checkpoint.TypeName[*unstructured.Unstructured](), Encoding: uc.Name}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "e.x/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns", "resourceVersion": "9"}, "spec": map[string]any{"size": int64(3)}}}
	var b bytes.Buffer
	if err := checkpoint.Encode(&b, uid, uc, checkpoint.Snapshot[*unstructured.Unstructured]{ResourceVersion: "9", Items: []*unstructured.Unstructured{u}}); err != nil {
		t.Fatal(err)
	}
	us, err := checkpoint.Decode(&b, uid, uc)
	if err != nil {
		t.Fatal(err)
	}
	if len(us.Items) != 1 || !reflect.DeepEqual(us.Items[0].Object, u.Object) {
		t.Fatalf("unstructured round trip: %+v", us.Items)
	}
}

// Every way a checkpoint can be wrong is detected, named, and yields no
// objects.
func TestDecodeRefusesBadCheckpoints(t *testing.T) {
	good := encode(t, checkpoint.Snapshot[*corev1.Pod]{ResourceVersion: "7", Items: pods(3)})
	codec := podCodec(t)
	check := func(name string, data []byte, id checkpoint.Identity, target error) {
		t.Helper()
		snap, err := checkpoint.Decode(bytes.NewReader(data), id, codec)
		if !errors.Is(err, target) {
			t.Errorf("%s: err = %v, want %v", name, err, target)
		}
		if len(snap.Items) != 0 || snap.ResourceVersion != "" {
			t.Errorf("%s: returned a partial snapshot: %d items at %q", name, len(snap.Items), snap.ResourceVersion)
		}
	}
	// Truncated anywhere.
	for n := 0; n < len(good); n++ {
		check(fmt.Sprintf("truncated to %d bytes", n), good[:n], podID, checkpoint.ErrCorrupt)
	}
	// Any single byte flipped past the version (the version has its own error).
	for i := 10; i < len(good); i++ {
		bad := bytes.Clone(good)
		bad[i] ^= 0x40
		snap, err := checkpoint.Decode(bytes.NewReader(bad), podID, codec)
		if err == nil {
			t.Fatalf("byte %d flipped: accepted (%d items)", i, len(snap.Items))
		}
		if !errors.Is(err, checkpoint.ErrCorrupt) && !errors.Is(err, checkpoint.ErrMismatch) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	check("trailing garbage", append(bytes.Clone(good), 0), podID, checkpoint.ErrCorrupt)
	check("not a checkpoint", []byte("apiVersion: v1\nkind: Pod\n"), podID, checkpoint.ErrCorrupt)

	v1 := bytes.Clone(good)
	binary.BigEndian.PutUint16(v1[8:], 1)
	check("format version 1 (no cluster)", v1, podID, checkpoint.ErrVersion)

	other := podID
	other.Cluster = "0b5e7c11-cluster-b"
	check("another cluster", good, other, checkpoint.ErrOtherCluster)
	other.Cluster = ""
	check("an unknown cluster", good, other, checkpoint.ErrOtherCluster)

	other = podID
	other.Resource = "typed /v1, Resource=pods namespace=db"
	check("another namespace", good, other, checkpoint.ErrMismatch)
	other = podID
	other.Resource += " labels=app=web"
	check("another selector", good, other, checkpoint.ErrMismatch)
	other = podID
	other.Type = "*v1.ConfigMap"
	check("another type", good, other, checkpoint.ErrMismatch)
	other = podID
	other.Encoding = "json"
	check("another encoding", good, other, checkpoint.ErrMismatch)
}

// ReadHeader reads what a checkpoint says of itself, and checks whose it
// is, without reading its objects: a file corrupt past its header passes
// ReadHeader and fails Read.
func TestReadHeaderReadsNoObject(t *testing.T) {
	written := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	good := encode(t, checkpoint.Snapshot[*corev1.Pod]{ResourceVersion: "4711", Items: pods(3), Written: written})
	dir := t.TempDir()
	path := filepath.Join(dir, "pods.ckpt")
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := checkpoint.ReadHeader(path, podID)
	if err != nil || h.ResourceVersion != "4711" || h.Count != 3 || !h.Written.Equal(written) {
		t.Fatalf("header %+v, %v", h, err)
	}
	other := podID
	other.Cluster = "0b5e7c11-cluster-b"
	if _, err := checkpoint.ReadHeader(path, other); !errors.Is(err, checkpoint.ErrOtherCluster) {
		t.Fatalf("another cluster's header: %v", err)
	}

	bad := bytes.Clone(good)
	bad[len(bad)-10] ^= 0x40 // in the last object
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if h, err := checkpoint.ReadHeader(path, podID); err != nil || h.ResourceVersion != "4711" {
		t.Fatalf("header of a file corrupt past it: %+v, %v", h, err)
	}
	if _, err := checkpoint.Read(path, podID, podCodec(t)); !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Fatalf("Read of a file corrupt past its header: %v", err)
	}
	for n := range 30 { // truncated inside the fixed part or the header
		if err := os.WriteFile(path, good[:n], 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := checkpoint.ReadHeader(path, podID); !errors.Is(err, checkpoint.ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	if _, err := checkpoint.ReadHeader(filepath.Join(dir, "missing.ckpt"), podID); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := checkpoint.ReadHeader(dir, podID); !errors.Is(err, checkpoint.ErrNotRegular) {
		t.Fatalf("a directory: %v", err)
	}
}

// Write replaces a checkpoint atomically with a 0600 file and leaves no
// temporary file behind; Read says a missing checkpoint is missing.
func TestWriteIsAtomicAndPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	path := checkpoint.Path(dir, podID)
	if _, err := checkpoint.Read(path, podID, podCodec(t)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing checkpoint: %v", err)
	}
	for i, n := range []int{3, 5} {
		if err := checkpoint.Write(path, podID, podCodec(t), checkpoint.Snapshot[*corev1.Pod]{ResourceVersion: fmt.Sprint(i + 1), Items: pods(n)}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("checkpoint mode %v, want 0600", st.Mode().Perm())
	}
	if d, _ := os.Stat(dir); d.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", d.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want the checkpoint alone", len(entries))
	}
	snap, err := checkpoint.Read(path, podID, podCodec(t))
	if err != nil || snap.ResourceVersion != "2" || len(snap.Items) != 5 {
		t.Fatalf("read back %q, %d items, %v", snap.ResourceVersion, len(snap.Items), err)
	}
	// A failing encode leaves the old checkpoint in place.
	failing := podCodec(t)
	failing.Encode = func([]byte, *corev1.Pod) ([]byte, error) { return nil, errors.New("boom") }
	if err := checkpoint.Write(path, podID, failing, checkpoint.Snapshot[*corev1.Pod]{ResourceVersion: "3", Items: pods(1)}); err == nil {
		t.Fatal("failing encode: no error")
	}
	if snap, err := checkpoint.Read(path, podID, podCodec(t)); err != nil || snap.ResourceVersion != "2" {
		t.Fatalf("after a failed write: %q, %v", snap.ResourceVersion, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left %d entries", len(entries))
	}
}

func TestPathSeparatesIdentities(t *testing.T) {
	a := checkpoint.Path("/d", podID)
	other := podID
	other.Resource += " labels=app=web"
	if b := checkpoint.Path("/d", other); a == b || filepath.Dir(a) != "/d" {
		t.Fatalf("paths %q and %q", a, b)
	}
}

func FuzzDecode(f *testing.F) {
	codec := podCodec(f)
	f.Add(encode(f, checkpoint.Snapshot[*corev1.Pod]{ResourceVersion: "7", Items: pods(2)}))
	f.Add(encode(f, checkpoint.Snapshot[*corev1.Pod]{}))
	f.Add([]byte("KINFCKPT"))
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, err := checkpoint.Decode(bytes.NewReader(data), podID, codec)
		h, herr := checkpoint.DecodeHeader(bytes.NewReader(data), podID)
		if err == nil && (herr != nil || h.ResourceVersion != snap.ResourceVersion || h.Count != len(snap.Items) || !h.Written.Equal(snap.Written)) {
			// The header of a checkpoint Decode accepts is accepted, and
			// says what Decode read.
			t.Fatalf("header %+v, %v; the checkpoint has %d items at %q written %v", h, herr, len(snap.Items), snap.ResourceVersion, snap.Written)
		}
		if herr != nil && !errors.Is(herr, checkpoint.ErrCorrupt) && !errors.Is(herr, checkpoint.ErrVersion) && !errors.Is(herr, checkpoint.ErrMismatch) {
			t.Fatalf("header error of no known kind: %v", herr)
		}
		if err != nil {
			if !errors.Is(err, checkpoint.ErrCorrupt) && !errors.Is(err, checkpoint.ErrVersion) && !errors.Is(err, checkpoint.ErrMismatch) {
				t.Fatalf("error of no known kind: %v", err)
			}
			if len(snap.Items) != 0 {
				t.Fatal("partial snapshot returned with an error")
			}
			return
		}
		// Whatever decodes encodes back to a checkpoint that decodes the same.
		var b bytes.Buffer
		if err := checkpoint.Encode(&b, podID, codec, snap); err != nil {
			t.Fatal(err)
		}
		again, err := checkpoint.Decode(&b, podID, codec)
		if err != nil || len(again.Items) != len(snap.Items) || again.ResourceVersion != snap.ResourceVersion {
			t.Fatalf("re-encoded checkpoint: %d items at %q, %v", len(again.Items), again.ResourceVersion, err)
		}
	})
}

// Large checkpoints are decoded on several goroutines: every object comes
// back once, and a failure anywhere still fails the whole load.
func TestDecodeOfALargeCheckpoint(t *testing.T) {
	const n = 3000
	data := encode(t, checkpoint.Snapshot[*corev1.Pod]{ResourceVersion: "9", Items: pods(n)})
	got, err := checkpoint.Decode(bytes.NewReader(data), podID, podCodec(t))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range got.Items {
		seen[p.Name] = true
	}
	if len(got.Items) != n || len(seen) != n {
		t.Fatalf("%d objects, %d distinct, want %d", len(got.Items), len(seen), n)
	}
	for _, cut := range []int{len(data) / 3, len(data) / 2, len(data) - 10} {
		if _, err := checkpoint.Decode(bytes.NewReader(data[:cut]), podID, podCodec(t)); !errors.Is(err, checkpoint.ErrCorrupt) {
			t.Errorf("cut at %d: %v", cut, err)
		}
	}
	failing := podCodec(t)
	var calls atomic.Int64
	failing.Decode = func(b []byte) (*corev1.Pod, error) {
		if calls.Add(1) == n/2 {
			return nil, errors.New("boom")
		}
		return podCodec(t).Decode(b)
	}
	if snap, err := checkpoint.Decode(bytes.NewReader(data), podID, failing); !errors.Is(err, checkpoint.ErrCorrupt) || len(snap.Items) != 0 {
		t.Fatalf("a failing object: %v, %d items", err, len(snap.Items))
	}
}

// A path that is not a regular file is refused without reading from it:
// a FIFO with no writer would block an ordinary open forever, a device
// would be read as a checkpoint.
func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	toDir, toFIFO := filepath.Join(dir, "to-dir"), filepath.Join(dir, "to-fifo")
	if err := os.Symlink(sub, toDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fifo, toFIFO); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, sub, toDir, toFIFO, os.DevNull} {
		done := make(chan error, 1)
		go func() {
			_, err := checkpoint.Read(path, podID, podCodec(t))
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, checkpoint.ErrNotRegular) {
				t.Errorf("%s: err = %v, want ErrNotRegular", path, err)
			}
		case <-time.After(10 * time.Second): // a blocked open never returns: fail rather than hang
			t.Fatalf("%s: Read blocked", path)
		}
	}
	// A symbolic link to a good checkpoint is read through.
	good := filepath.Join(dir, "good.ckpt")
	if err := checkpoint.Write(good, podID, podCodec(t), checkpoint.Snapshot[*corev1.Pod]{ResourceVersion: "9", Items: pods(2)}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.ckpt")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	if snap, err := checkpoint.Read(link, podID, podCodec(t)); err != nil || len(snap.Items) != 2 {
		t.Fatalf("symlink to a checkpoint: %d items, %v", len(snap.Items), err)
	}
}

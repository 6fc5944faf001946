package checkpoint_test

import (
	corev1 "k8s.io/api/core/v1"

	"path/filepath"
	"testing"

	"github.com/kinformer/kinformer/checkpoint"
)

// BenchmarkRead reads a checkpoint of 20,000 small pods: the decoding that
// a warm restart waits for (bench/cmd/controlplane -warm-restart measures
// it end to end).
func BenchmarkRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "pods.ckpt")
	codec := podCodec(b)
	items := pods(20000)
	if err := checkpoint.Write(path, podID, codec, checkpoint.Snapshot[*corev1.Pod]{ResourceVersion: "42", Items: items}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		snap, err := checkpoint.Read(path, podID, codec)
		if err != nil || len(snap.Items) != len(items) {
			b.Fatalf("read %d objects: %v", len(snap.Items), err)
		}
	}
}

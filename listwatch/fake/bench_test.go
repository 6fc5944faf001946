package fake_test

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/listwatch/fake"
)

// BenchmarkFakeWriteWithCompactionWindow times one Update with the window
// full, for a small and a large window: the two should cost the same.
//
//	go test -run '^$' -bench BenchmarkFakeWrite -benchmem ./listwatch/fake/
func BenchmarkFakeWriteWithCompactionWindow(b *testing.B) {
	for _, window := range []int64{10, 100_000} {
		b.Run("window="+strconv.FormatInt(window, 10), func(b *testing.B) {
			s, err := fake.New(fake.Options[*corev1.ConfigMap]{CompactionWindow: window})
			if err != nil {
				b.Fatal(err)
			}
			obj := cm("a")
			if _, err := s.Create(obj); err != nil {
				b.Fatal(err)
			}
			for range window { // fill the window
				if _, err := s.Update(obj); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Update(obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

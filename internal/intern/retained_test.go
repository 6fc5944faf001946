package intern

import (
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// retainedPods is the number of pods BenchmarkRetained decodes per run:
// enough for each of the fixture's 679 distinct containers to repeat.
const retainedPods = 10_000

// retainedCases are BenchmarkRetained's lines: plain decoding, strings
// only (the default), each shared part alone on top of strings (its gain
// alone is its line minus the strings line; fields-aliased against fields
// is the gain of aliasFieldKeys), everything Options.ShareParts turns on,
// and that without each part (its gain among the others is that line
// minus the shared-parts line).
var retainedCases = []struct {
	name   string
	plain  bool
	tricks trick
}{
	{name: "plain", plain: true},
	{name: "strings"},
	{name: "fields", tricks: shareFields},
	{name: "fields-aliased", tricks: shareFields | aliasFieldKeys},
	{name: "lists", tricks: shareLists},
	{name: "spec-runs", tricks: shareSpecRuns},
	{name: "status-runs", tricks: shareStatusRuns},
	{name: "shared-parts", tricks: allTricks},
	{name: "shared-parts-without-fields", tricks: allTricks &^ (shareFields | aliasFieldKeys)},
	{name: "shared-parts-without-alias", tricks: allTricks &^ aliasFieldKeys},
	{name: "shared-parts-without-lists", tricks: allTricks &^ shareLists},
	{name: "shared-parts-without-spec-runs", tricks: allTricks &^ shareSpecRuns},
	{name: "shared-parts-without-status-runs", tricks: allTricks &^ shareStatusRuns},
}

// BenchmarkRetained decodes 10,000 pods of a cluster of Deployments (see
// workloadPod), once per case of retainedCases, and reports the heap they
// and the Interner's tables retain (B/pod, measured once per run after
// garbage collection, tables included) and the process CPU time of the
// decode (cpu-ns/pod, garbage collection included; on a loaded machine it
// varies far less than ns/op). Run it with -count 5
// or more and compare min, median and max of each line.
func BenchmarkRetained(b *testing.B) {
	raws := workloadRaws(b, retainedPods)
	for _, c := range retainedCases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			decodeAll := func() ([]*corev1.Pod, *Interner) {
				pods := make([]*corev1.Pod, len(raws))
				in := newWith(c.tricks)
				for i, raw := range raws {
					var err error
					if c.plain {
						pods[i], err = decodePod(raw)
					} else {
						pods[i], err = in.Pod(raw, decodePod)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				return pods, in
			}
			// The source keeps its Interner as long as the cache keeps
			// the pods, so its tables count.
			before := heapAfterGC()
			pods, in := decodeAll()
			retained := heapAfterGC() - before
			runtime.KeepAlive(pods)
			runtime.KeepAlive(in)
			pods, in = nil, nil
			cpu := processCPU()
			for b.Loop() {
				decodeAll()
			}
			cpu = processCPU() - cpu
			b.ReportMetric(float64(retained)/retainedPods, "B/pod")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/retainedPods, "cpu-ns/pod")
		})
	}
}

// newWith returns an Interner using exactly tricks.
func newWith(tricks trick) *Interner {
	in := New(Options{ShareParts: true})
	in.tricks = tricks
	return in
}

func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

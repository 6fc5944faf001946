package scenario

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kinformer/kinformer/testenv"
)

// The cost curve of issue 13: the memory of a synced cache at several
// sizes (10,000, 50,000 and 100,000 pods by default), a line per size and
// figure, on one control plane that grows between sizes. The pods are
// sidecarPod pods written straight into etcd (seedStored), because
// creating 100,000 through the API takes this 2-core machine about ten
// minutes. Each size runs the sides of scaleSides, each in a child process
// per run (memory_child.go), runs alternating. Lines, N the size:
//
//	scale-heap-per-pod-N            kinformer (default options) against client-go,
//	                                heap per pod as heap-per-pod-full (target 0.95)
//	scale-rss-N                     their peak RSS (scenario 7's target, 0.6)
//	scale-heap-per-pod-projected-N  the projected view against client-go (0.1),
//	scale-rss-projected-N           and its peak RSS (0.6), when the build has one

// ScaleOptions configure RunScale.
type ScaleOptions struct {
	// Sizes are the pod counts, measured in increasing order. Default
	// 10,000, 50,000 and 100,000.
	Sizes []int
	// Count of runs per side and size. Default 3.
	Count int
	// Settle is the pause before each child run (see
	// ControlPlaneOptions.Settle).
	Settle time.Duration
	// Progress, when set, receives progress lines.
	Progress func(format string, args ...any)
}

// scaleSides are the sides measured at every size.
func scaleSides() []Side { return append([]Side{MemOurs, MemClientGo}, viewSides...) }

// RunScale measures the cost curve (see above).
func RunScale(ctx context.Context, opts ScaleOptions) ([]Report, error) {
	if len(opts.Sizes) == 0 {
		opts.Sizes = []int{10_000, 50_000, 100_000}
	}
	sizes := slices.Sorted(slices.Values(opts.Sizes))
	pods := sizes[len(sizes)-1]
	defaults(&pods, &opts.Count, 3, &opts.Settle)
	say := sayFunc(opts.Progress).orNothing()
	self, err := childCommand(nil)
	if err != nil {
		return nil, err
	}
	cl, err := openCluster(ctx, "", testenv.Options{}, say)
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	var reports []Report
	for _, n := range sizes {
		have, err := cl.seedStored(ctx, n, say)
		if err != nil {
			return nil, err
		}
		label := fmt.Sprintf("scale %d", n)
		runs, err := runMemSides(ctx, self, cl, scaleSides(), have, opts.Count, opts.Settle, label, say)
		if err != nil {
			return nil, err
		}
		reports = append(reports, scaleReports(runs, n, MemOurs, "")...)
		for _, v := range viewSides {
			reports = append(reports, scaleReports(runs, n, v, "-projected")...)
		}
	}
	return reports, nil
}

// scaleReports are the lines of ours against client-go at size n.
func scaleReports(runs memoryRuns, n int, ours Side, suffix string) []Report {
	heapTarget := podMemoryTarget
	if ours != MemOurs {
		heapTarget = projectedTarget
	}
	rss := func(r MemResult) float64 { return float64(r.PeakRSSKB) / 1024 }
	millis := func(r MemResult) float64 { return r.Millis }
	heap := pairReport(fmt.Sprintf("scale-heap-per-pod%s-%d", suffix, n), "B/pod", heapTarget,
		runs.values(ours, heapPerPod), runs.values(MemClientGo, heapPerPod))
	heap.Detail = map[string]Summary{
		"ours-sync-ms":     Summarize(runs.values(ours, millis)),
		"clientgo-sync-ms": Summarize(runs.values(MemClientGo, millis)),
	}
	return []Report{
		runs.withCPU(heap, ours, MemClientGo),
		runs.withCPU(pairReport(fmt.Sprintf("scale-rss%s-%d", suffix, n), "MB", scaleRSSTarget,
			runs.values(ours, rss), runs.values(MemClientGo, rss)), ours, MemClientGo),
	}
}

// scaleRSSTarget is scenario 7's peak RSS target, which the scale-rss
// lines reuse; projectedTarget is heap-per-pod-projected's.
const (
	scaleRSSTarget  = 0.6
	projectedTarget = 0.1
)

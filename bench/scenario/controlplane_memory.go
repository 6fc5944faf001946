package scenario

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/kinformer/kinformer/testenv"
)

// The memory scenarios of issue 13, against the local control plane, each
// side in a child process per run (memory_child.go), runs alternating:
//
//   - sync-floor, sync-vs-floor: the floor (readFloor: the bytes of
//     kinformer's default list, received and discarded) against client-go's
//     and kinformer's initial sync time; sync-vs-floor is kinformer's
//     sync / the floor, target <= 1.3.
//   - heap-per-pod-*: the live heap after a full GC, minus the same before
//     the sync, per cached pod (sidecarPod: two containers, managedFields
//     of two managers, about 7 KB of JSON), for kinformer with default
//     options, kinformer with informer.DropManagedFields, client-go, client-go
//     with a transform clearing managedFields, and kinformer's projected
//     view when the build has one (see viewSides).
//   - sync-cpu-projected: the process CPU time of the sync per pod with
//     the projected view / the same with the full type, target <= 0.5.
//   - relist-peak-heap, relist-peak-rss: on a second control plane with
//     the watch cache off, each side syncs, measures its steady state, and
//     the parent forces a relist: it stops the apiserver, compacts etcd
//     twice (so the version the informer watches from is gone) and starts
//     it again; the informer's watch comes back with 410 Gone and it lists
//     everything again. ours= and clientgo= are each side's peak during
//     the relist divided by its steady state before it; the target, <=
//     1.25, is kinformer's.
//   - relist-peak-changed-heap, relist-peak-changed-rss: the same, with
//     every pod but the API-created templates written again into etcd
//     while the apiserver is down, so that the relist brings each at a new
//     version: no cached object can be reused, and what keeps the peak
//     down is the relist applied page by page as it arrives.

// MemoryOptions configure RunMemory.
type MemoryOptions struct {
	// Pods to create and sync. Default 20,000.
	Pods int
	// Count of runs per side. Default 5.
	Count int
	// Settle is the pause before each child run (see
	// ControlPlaneOptions.Settle).
	Settle time.Duration
	// Kubeconfig, when set, runs the sync scenarios against that cluster
	// (creating sidecarPod pods there if it has fewer than Pods); the
	// relist scenario needs a control plane of its own and is skipped.
	Kubeconfig string
	// SkipSync and SkipRelist leave out one half.
	SkipSync, SkipRelist bool
	// Child is the command line of the child processes; empty means this
	// executable (a test passes its binary and a -test.run flag).
	Child []string
	// Progress, when set, receives progress lines.
	Progress func(format string, args ...any)
}

// memSyncSides are the sync sides, in the order of odd runs.
func memSyncSides() []Side {
	return append([]Side{MemFloor, MemOurs, MemOursNoMF, MemClientGo, MemClientGoNoMF}, viewSides...)
}

// RunMemory measures the memory scenarios (see above).
func RunMemory(ctx context.Context, opts MemoryOptions) ([]Report, error) {
	defaults(&opts.Pods, &opts.Count, 5, &opts.Settle)
	say := sayFunc(opts.Progress).orNothing()
	self, err := childCommand(opts.Child)
	if err != nil {
		return nil, err
	}
	var reports []Report
	if !opts.SkipSync {
		cl, err := openCluster(ctx, opts.Kubeconfig, testenv.Options{}, say)
		if err != nil {
			return nil, err
		}
		r, err := memorySync(ctx, opts, self, cl, say)
		cl.stop()
		if err != nil {
			return nil, err
		}
		reports = append(reports, r...)
	}
	if !opts.SkipRelist && opts.Kubeconfig == "" {
		r, err := memoryRelist(ctx, opts, self, say)
		if err != nil {
			return nil, err
		}
		reports = append(reports, r...)
	}
	return reports, nil
}

// memoryRuns is what the runs of some memory sides measured.
type memoryRuns map[Side][]MemResult

// values returns f of every run of side.
func (m memoryRuns) values(side Side, f func(MemResult) float64) []float64 {
	out := make([]float64, len(m[side]))
	for i, r := range m[side] {
		out[i] = f(r)
	}
	return out
}

// runMemSides runs every side of sides count times, alternating the
// order, in child processes against cl holding want pods, and checks that
// every side cached the same pods (the floor: read as many).
func runMemSides(ctx context.Context, self []string, cl *cluster, sides []Side, want, count int, pause time.Duration, label string, say sayFunc) (memoryRuns, error) {
	runs := memoryRuns{}
	var digest string
	for i := range count {
		for _, side := range alternating(i, sides) {
			if err := settle(ctx, pause); err != nil {
				return nil, err
			}
			res, err := runMemChild(ctx, self, side, cl, want, nil, nil)
			if err != nil {
				return nil, fmt.Errorf("%s (%s, run %d): %w", label, side, i+1, err)
			}
			if err := checkMemResult(side, res, want, &digest); err != nil {
				return nil, fmt.Errorf("%s (%s, run %d): %w", label, side, i+1, err)
			}
			say("%s run %d %-17s %8.0f ms  CPU %6.2f s  heap %7.0f B/pod  peak RSS %6.1f MB",
				label, i+1, side, res.Millis, res.CPUSeconds, res.HeapPerObject(), float64(res.PeakRSSKB)/1024)
			runs[side] = append(runs[side], res)
		}
	}
	return runs, nil
}

// checkMemResult checks that a child synced want pods, the same as every
// earlier side (digest; set by the first).
func checkMemResult(side Side, res MemResult, want int, digest *string) error {
	if res.Objects != want {
		return fmt.Errorf("%w: %d pods, want %d", ErrMismatch, res.Objects, want)
	}
	if side == MemFloor {
		return nil
	}
	switch {
	case *digest == "":
		*digest = res.Digest
	case res.Digest != *digest:
		return fmt.Errorf("%w: digest %q, earlier runs %q", ErrMismatch, res.Digest, *digest)
	}
	return nil
}

// runMemChild runs one memory child against cl, with env added to its
// environment; onLine receives its progress lines.
func runMemChild(ctx context.Context, self []string, side Side, cl *cluster, want int, env []string, onLine func(string) error) (MemResult, error) {
	res, _, err := runChildJSON[MemResult](ctx, childRun{args: self, onLine: onLine, env: append(childEnv(
		ChildSideEnv, string(side),
		ChildKubeconfigEnv, cl.kubeconfig,
		ChildPodsEnv, strconv.Itoa(want)), env...)})
	return res, err
}

// memorySync measures sync-floor, sync-vs-floor, heap-per-pod-* and
// sync-cpu-projected on cl.
func memorySync(ctx context.Context, opts MemoryOptions, self []string, cl *cluster, say sayFunc) ([]Report, error) {
	have, err := cl.seedSidecar(ctx, opts.Pods, say)
	if err != nil {
		return nil, err
	}
	full, noMF, err := cl.podJSONSize(ctx)
	if err != nil {
		return nil, err
	}
	say("a pod is %d bytes of JSON as the server holds it, %d without managedFields", full, noMF)
	runs, err := runMemSides(ctx, self, cl, memSyncSides(), have, opts.Count, opts.Settle, "memory", say)
	if err != nil {
		return nil, err
	}
	millis := func(r MemResult) float64 { return r.Millis }
	floor := runs.values(MemFloor, millis)
	syncFloor := informational("sync-floor", "ms", floor, runs.values(MemClientGo, millis),
		"ours= the floor (kinformer's default list received and discarded), clientgo= client-go's sync")
	syncFloor.Detail = map[string]Summary{
		"floor-mb-read": Summarize(runs.values(MemFloor, func(r MemResult) float64 { return float64(r.Bytes) / 1e6 })),
		"ours-sync-ms":  Summarize(runs.values(MemOurs, millis)),
	}
	podSize := map[string]Summary{"pod-json-bytes": Summarize([]float64{float64(full)}),
		"pod-json-bytes-without-managedfields": Summarize([]float64{float64(noMF)})}
	vsFloor := pairReport("sync-vs-floor", "ms", 1.3, runs.values(MemOurs, millis), floor)
	vsFloor.Note = "ours= kinformer's sync (default options), clientgo= the floor"
	reports := []Report{
		runs.withCPU(syncFloor, MemFloor, MemClientGo),
		runs.withCPU(vsFloor, MemOurs, MemFloor),
		runs.withCPU(pairReport("heap-per-pod-full", "B/pod", podMemoryTarget,
			runs.values(MemOurs, heapPerPod), runs.values(MemClientGo, heapPerPod)), MemOurs, MemClientGo),
		runs.withCPU(pairReport("heap-per-pod-nomf", "B/pod", podMemoryTarget,
			runs.values(MemOursNoMF, heapPerPod), runs.values(MemClientGoNoMF, heapPerPod)), MemOursNoMF, MemClientGoNoMF),
	}
	reports[2].Detail = podSize
	return append(reports, viewReports(runs)...), nil
}

// heapPerPod and cpuPerPod are what heap-per-pod and sync-cpu-projected
// read from a run: bytes and CPU microseconds per synced pod.
func heapPerPod(r MemResult) float64 { return r.HeapPerObject() }
func cpuPerPod(r MemResult) float64  { return r.CPUSeconds / float64(r.Objects) * 1e6 }

// withCPU sets r's CPU figures from the runs of ours and other.
func (m memoryRuns) withCPU(r Report, ours, other Side) Report {
	cpu := func(r MemResult) float64 { return r.CPUSeconds }
	r.OursCPU, r.ClientGoCPU = Summarize(m.values(ours, cpu)), Summarize(m.values(other, cpu))
	r.CPURatio = r.OursCPU.Median / r.ClientGoCPU.Median
	return r
}

// podMemoryTarget is the pod-memory scenario's target, which the
// heap-per-pod lines without one of their own in issue 13 reuse.
const podMemoryTarget = 0.95

// informational is a Report with no target: Ratio is Ours/ClientGo and
// Met is true.
func informational(name, unit string, ours, other []float64, note string) Report {
	r := Report{Name: name, Unit: unit, Ours: Summarize(ours), ClientGo: Summarize(other), Note: note, Met: true}
	r.Ratio = r.Ours.Median / r.ClientGo.Median
	return r
}

// relistTarget is the most kinformer's peak may be of its steady state
// during a relist.
const relistTarget = 1.25

// memoryRelist measures the relist-peak lines on a control plane of its
// own, with the watch cache off: relist-peak-heap and -rss with every pod
// unchanged by the forced relist, relist-peak-changed-heap and -rss with
// every pod changed (written again into etcd while the apiserver is down,
// so every listed pod is at a new version and must be decoded and cached
// in place of the old one).
func memoryRelist(ctx context.Context, opts MemoryOptions, self []string, say sayFunc) ([]Report, error) {
	cl, err := openCluster(ctx, "", testenv.Options{DisableWatchCache: true}, say)
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	have, err := cl.seedSidecar(ctx, opts.Pods, say)
	if err != nil {
		return nil, err
	}
	rewrite, err := cl.sidecarRewriter(ctx, have)
	if err != nil {
		return nil, err
	}
	var reports []Report
	for _, v := range []struct {
		name   string
		change func(context.Context) error
	}{{"relist-peak", nil}, {"relist-peak-changed", rewrite}} {
		rs, err := relistVariant(ctx, opts, self, say, cl, have, v.name, v.change)
		if err != nil {
			return nil, err
		}
		reports = append(reports, rs...)
	}
	return reports, nil
}

// relistVariant runs the relist runs of one variant, named name; change,
// when set, changes the pods while the apiserver is down.
func relistVariant(ctx context.Context, opts MemoryOptions, self []string, say sayFunc, cl *cluster, have int, name string, change func(context.Context) error) ([]Report, error) {
	sides := []Side{MemOurs, MemClientGo}
	runs := memoryRuns{}
	var digest string
	for i := range opts.Count {
		for _, side := range alternating(i, sides) {
			if err := settle(ctx, opts.Settle); err != nil {
				return nil, err
			}
			forced := false
			force := func(line string) error {
				if line != relistReady || forced {
					return fmt.Errorf("unexpected line %q from the child", line)
				}
				forced = true
				return forceRelist(ctx, cl.env, change)
			}
			res, err := runMemChild(ctx, self, side, cl, have, childEnv(ChildRelistEnv, "true"), force)
			if err == nil && (res.Relist == nil || res.Relist.Objects != have) {
				err = fmt.Errorf("%w: no relist of %d pods reported", ErrMismatch, have)
			}
			if change != nil {
				digest = "" // every run starts from versions the last one changed
			}
			if err == nil {
				err = checkMemResult(side, res, have, &digest)
			}
			if err != nil {
				return nil, fmt.Errorf("%s (%s, run %d): %w", name, side, i+1, err)
			}
			rl := res.Relist
			say("%s run %d %-12s relist %6.0f ms %-9s  live heap %6.1f -> %6.1f MB (%.2fx)  RSS %6.1f -> %6.1f MB (%.2fx, %s)",
				name, i+1, side, rl.Millis, rl.Mode, mb(rl.SteadyHeap), mb(rl.PeakHeap), rl.heapRatio(),
				float64(rl.SteadyRSSKB)/1024, float64(rl.PeakRSSKB)/1024, rl.rssRatio(), rl.RSSMethod)
			runs[side] = append(runs[side], res)
		}
	}
	relist := func(f func(*RelistResult) float64) func(MemResult) float64 {
		return func(r MemResult) float64 { return f(r.Relist) }
	}
	line := func(name string, ratio func(*RelistResult) float64, steady, peak func(*RelistResult) float64) Report {
		r := Report{Name: name, Unit: "x", Target: Target{Op: AtMost, Value: relistTarget}.String(),
			Ours: Summarize(runs.values(MemOurs, relist(ratio))), ClientGo: Summarize(runs.values(MemClientGo, relist(ratio))),
			Note: "ours= and clientgo= are each side's peak during the relist / its steady state before it; ratio= is ours=, the target is kinformer's"}
		r.Ratio = r.Ours.Median
		r.Met = r.Ratio <= relistTarget
		r.Detail = map[string]Summary{
			"ours-steady-mb":     Summarize(runs.values(MemOurs, relist(steady))),
			"ours-peak-mb":       Summarize(runs.values(MemOurs, relist(peak))),
			"clientgo-steady-mb": Summarize(runs.values(MemClientGo, relist(steady))),
			"clientgo-peak-mb":   Summarize(runs.values(MemClientGo, relist(peak))),
			"ours-relist-ms":     Summarize(runs.values(MemOurs, relist(func(r *RelistResult) float64 { return r.Millis }))),
			"clientgo-relist-ms": Summarize(runs.values(MemClientGo, relist(func(r *RelistResult) float64 { return r.Millis }))),
		}
		return r
	}
	return []Report{
		line(name+"-heap", (*RelistResult).heapRatio,
			func(r *RelistResult) float64 { return mb(r.SteadyHeap) }, func(r *RelistResult) float64 { return mb(r.PeakHeap) }),
		line(name+"-rss", (*RelistResult).rssRatio,
			func(r *RelistResult) float64 { return float64(r.SteadyRSSKB) / 1024 }, func(r *RelistResult) float64 { return float64(r.PeakRSSKB) / 1024 }),
	}, nil
}

// forceRelist makes every informer of env relist: it stops the apiserver
// (ending their watches), runs change if set, compacts etcd twice (the
// first compaction's own revision is the newest an informer can have
// seen, and a watch from the newest version starts at the next one, which
// the first compaction keeps; the second does not) and starts the
// apiserver again. The informers' watches, reopened from their versions,
// get 410 Gone: with the watch cache off they are served by etcd.
func forceRelist(ctx context.Context, env *testenv.Env, change func(context.Context) error) error {
	if err := env.StopAPIServer(ctx); err != nil {
		return err
	}
	if change != nil {
		if err := change(ctx); err != nil {
			return errors.Join(err, env.StartAPIServer(ctx))
		}
	}
	for range 2 {
		if _, err := env.CompactEtcd(ctx); err != nil {
			return err
		}
	}
	return env.StartAPIServer(ctx)
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

func (r *RelistResult) heapRatio() float64 { return float64(r.PeakHeap) / float64(r.SteadyHeap) }
func (r *RelistResult) rssRatio() float64  { return float64(r.PeakRSSKB) / float64(r.SteadyRSSKB) }

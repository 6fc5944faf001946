package scenario

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kinformer/kinformer/testenv"
)

// The million scenario (issue 25, part 1): one control plane holding
// 1,000,000 objects of MillionOptions.Kind (sidecarReplicaSet ReplicaSets
// by default, or sidecarPod pods), written straight into etcd
// (seedStoredKind), and every informer variant syncing all of them in a
// child process of its own, runs alternating. On the way up it measures the smaller sizes of
// the curve (CurveSizes: heap per object and peak RSS of every side).
//
// The apiserver runs with its watch cache off: with it on, it would keep
// every object decoded in its cache (about what client-go's informer
// holds, 14 KB per pod), and pods beside the informer of pods it runs
// anyway (see apiserverBytesPerPod). Off, every list and watch is served
// from etcd in pages. Its object-count metric is off too: it reads every
// object's key from etcd each minute. Even so the apiserver's own informer
// makes a million pods need about 33 GiB (hence ReplicaSets, which it
// does not inform on): checkResources refuses a size the machine cannot
// hold, saying what it needs, before anything starts.
//
// Sides: the floor (a streaming list read and discarded, readFloor),
// kinformer with the projected view (ReplicaSetView, PodView),
// metadata-only, and full objects, client-go's informer with full objects
// and with a transform dropping managedFields. A side whose RSS passes CapMB stops and reports
// how far it got and the memory it reached (MemResult.Capped); the parent
// kills a child that does not stop at CapMB plus a quarter.
//
// Lines at the largest size N (kinformer's view is ours=):
//
//	million-heap-per-object-view    view heap per object / client-go full (<= 0.1)
//	million-rss-view                view peak RSS / client-go's, and <= 1000 MB absolute
//	million-sync-time-SIDE          SIDE's sync against the floor's (kinformer: <= 1.3)
//	million-sync-cpu-SIDE           its CPU against the floor's (no target)
//	million-relist-peak-view        the view's RSS during a forced relist / before it (<= 1.25)
//	warm-restart-view-fresh-time    a restart of the view from a fresh checkpoint / cold (<= 0.25)
//	curve-heap-per-object-N, curve-rss-N at every size: the view against
//	client-go full, every side's figure in the detail

// MillionOptions configure RunMillion.
type MillionOptions struct {
	// Pods is the largest size, where every line is measured. Default
	// 1,000,000.
	Pods int
	// CurveSizes are smaller sizes measured on the way up (heap per
	// object and peak RSS of every side). Default 10,000 and 100,000.
	CurveSizes []int
	// Count of runs per side at the largest size. Default 3. A side that
	// passes CapMB in a run is not run again at that size: it is
	// reported as not fitting, from that run.
	Count int
	// CurveCount of runs per side at each of CurveSizes. Default 1: the
	// curve's figures (heap per object, peak RSS) vary by a few percent
	// between runs, and three runs of every side at 100,000 objects
	// would add about 10 minutes to a target the server already makes
	// long.
	CurveCount int
	// CapMB is the RSS at which a side stops (see above). Default
	// DefaultMillionCapMB.
	CapMB int
	// Settle is the pause before each child run (see
	// ControlPlaneOptions.Settle).
	Settle time.Duration
	// SkipWarm leaves out warm-restart-view-fresh-time.
	SkipWarm bool
	// WarmColdCount of cold runs of warm-restart-view-fresh-time (the
	// fresh restarts run Count times). Default 1: the run that writes the
	// checkpoint. A cold start of a million objects takes the server over
	// two minutes, and the view's own runs, at the same size and in the
	// same run, already give the cold sync's spread: the line prints them
	// beside its cold run.
	WarmColdCount int
	// Kind names the objects (a millionKind: "replicasets", the default,
	// or "pods", which needs a machine with about 33 GiB for a million).
	Kind string
	// Sides, when set, are the only sides run (names as in the lines:
	// floor, view, metadata, full, clientgo, clientgo-nomf); a line
	// that needs a side left out is left out, except million-rss-view,
	// then against its absolute bound. Default every side.
	Sides []string
	// ProfileDir, when set, makes every memory child write its
	// allocation profiles there (writeAllocsProfile).
	ProfileDir string
	// Progress, when set, receives progress lines.
	Progress func(format string, args ...any)

	kind  *millionKind // Kind's
	sides []Side       // Sides'
}

// DefaultMillionCapMB is MillionOptions.CapMB's default: room for the
// view and metadata informers at a million objects, and for the cluster and
// the machine's other users beside a side stopped there.
const DefaultMillionCapMB = 4096

// millionSides are the sides at every size, in the order of odd runs.
func millionSides() []Side {
	return []Side{MemFloor, MemOursView, MemOursMeta, MemOurs, MemClientGo, MemClientGoNoMF}
}

// millionSidesNamed returns the sides of names, in millionSides' order
// (every side when names is empty).
func millionSidesNamed(names []string) ([]Side, error) {
	if len(names) == 0 {
		return millionSides(), nil
	}
	var sides []Side
	for _, side := range millionSides() {
		if slices.Contains(names, millionSideName[side]) {
			sides = append(sides, side)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(sides, func(s Side) bool { return millionSideName[s] == n }) {
			return nil, fmt.Errorf("million: unknown side %q (want floor, view, metadata, full, clientgo or clientgo-nomf)", n)
		}
	}
	return sides, nil
}

// millionSideName is a side's name in the lines.
var millionSideName = map[Side]string{
	MemFloor: "floor", MemOursView: "view", MemOursMeta: "metadata", MemOurs: "full",
	MemClientGo: "clientgo", MemClientGoNoMF: "clientgo-nomf",
}

// ErrShortOfResources: the machine has less free memory or disk than the
// scenario needs.
var ErrShortOfResources = errors.New("not enough free memory or disk")

// What the pods take beside the informers, per pod and fixed, measured
// on this machine at 20,000 to 100,000 pods (bench/README.md):
//
//   - the kube-apiserver keeps every pod in an informer of its own,
//     whatever its watch cache: its service-account token authenticator
//     asks client-go's shared informer factory for a pod lister, so it
//     holds full pods as client-go does (14 KB each, about 20 KB of RSS
//     with the garbage collector's headroom; 1.1 GB at 30,000 pods);
//   - etcd maps its database (5.4 KB of protobuf per pod and its pages)
//     and holds its index, about 6 KB per pod beside a fixed part;
//   - etcd's data directory (database and write-ahead log) takes about
//     16 KB per pod on disk.
//
// A ReplicaSet is counted as a pod (its pod template is most of one)
// but for the apiserver's part, which it does not take
// (millionKind.serverBytes).
const (
	apiserverBytesPerPod = 20 << 10
	etcdBytesPerPod      = 6 << 10
	diskBytesPerPod      = 16 << 10
	serverFixedBytes     = 1 << 30
	// The most a view or metadata child takes per pod (peak RSS, 1.6
	// KB measured for the view at 100,000) is under this.
	childBytesPerPod = 3 << 10
	// margin is left for the machine's other users.
	margin = 2 << 30
)

// millionNeeds returns the memory and disk a run at pods objects of kind
// with the given cap needs.
func millionNeeds(kind *millionKind, pods, capMB int) (mem, disk uint64) {
	child := max(uint64(capMB)<<20*5/4, uint64(pods)*childBytesPerPod)
	mem = uint64(pods)*(kind.serverBytes+etcdBytesPerPod) + serverFixedBytes + child + margin
	disk = uint64(pods)*diskBytesPerPod + margin
	return mem, disk
}

// checkResources refuses a run the machine cannot hold: MemAvailable
// (/proc/meminfo) and the free space of the directory the control plane
// keeps its data in (the temporary directory).
func checkResources(kind *millionKind, pods, capMB int) error {
	needMem, needDisk := millionNeeds(kind, pods, capMB)
	availKB, ok := readStatusKB("/proc/meminfo", "MemAvailable")
	if !ok {
		return fmt.Errorf("%w: cannot read MemAvailable from /proc/meminfo", ErrShortOfResources)
	}
	avail := uint64(availKB) << 10
	var st syscall.Statfs_t
	dir := os.TempDir()
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Errorf("%w: free space of %s: %v", ErrShortOfResources, dir, err)
	}
	free := st.Bavail * uint64(st.Bsize)
	var short []string
	if avail < needMem {
		short = append(short, fmt.Sprintf("%.1f GiB of free memory (MemAvailable; %.1f GiB now)", gib(needMem), gib(avail)))
	}
	if free < needDisk {
		short = append(short, fmt.Sprintf("%.1f GiB of free disk in %s (%.1f GiB now)", gib(needDisk), dir, gib(free)))
	}
	if len(short) > 0 {
		why := ""
		if kind.serverBytes > 0 {
			why = fmt.Sprintf(" (the kube-apiserver alone keeps about %d KB per %s: it holds every one in an informer of its own)",
				kind.serverBytes>>10, strings.TrimSuffix(kind.name, "s"))
		}
		return fmt.Errorf("%w: %d %s with a %d MB cap per side need %s%s; free some, or lower -pods or -cap-mb",
			ErrShortOfResources, pods, kind.name, capMB, joinAnd(short), why)
	}
	return nil
}

func gib(b uint64) float64 { return float64(b) / (1 << 30) }

func joinAnd(s []string) string {
	if len(s) == 2 {
		return s[0] + " and " + s[1]
	}
	return s[0]
}

// etcdFlags are the etcd flags of a run at pods: a backend quota with
// room for them (etcd refuses writes past its default 2 GiB), and a raft
// log kept short, which etcd otherwise holds in memory (10,000 entries:
// every seeding transaction of up to 768 KiB).
func etcdFlags(pods int) []string {
	quota := max(uint64(pods)*diskBytesPerPod, 2<<30)
	return []string{
		"--quota-backend-bytes=" + strconv.FormatUint(quota, 10),
		"--snapshot-count=1000",
		"--snapshot-catchup-entries=500",
	}
}

// RunMillion measures the million scenario (see above).
func RunMillion(ctx context.Context, opts MillionOptions) ([]Report, error) {
	if opts.Pods <= 0 {
		opts.Pods = 1_000_000
	}
	if opts.CurveSizes == nil {
		opts.CurveSizes = []int{10_000, 100_000}
	}
	if opts.CapMB <= 0 {
		opts.CapMB = DefaultMillionCapMB
	}
	if opts.Kind == "" {
		opts.Kind = replicaSetKind.name
	}
	kind, err := kindNamed(opts.Kind)
	if err != nil {
		return nil, err
	}
	opts.kind = kind
	if opts.sides, err = millionSidesNamed(opts.Sides); err != nil {
		return nil, err
	}
	pods := opts.Pods
	defaults(&pods, &opts.Count, 3, &opts.Settle)
	if opts.WarmColdCount <= 0 {
		opts.WarmColdCount = 1
	}
	if opts.CurveCount <= 0 {
		opts.CurveCount = 1
	}
	say := sayFunc(opts.Progress).orNothing()
	if err := checkResources(kind, pods, opts.CapMB); err != nil {
		return nil, err
	}
	self, err := childCommand(nil)
	if err != nil {
		return nil, err
	}
	low := startAvailWatch()
	defer low.stop()
	cl, err := openCluster(ctx, "", testenv.Options{
		DisableWatchCache: true,
		EtcdFlags:         etcdFlags(pods),
		// The object-count metric reads every pod's key from etcd (and
		// etcd every pod's value) each minute: minutes of both servers'
		// CPU, and a million keys in the apiserver's heap.
		APIServerFlags: []string{"--etcd-count-metric-poll-period=0"},
	}, say)
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	sizes := append(slices.DeleteFunc(slices.Sorted(slices.Values(opts.CurveSizes)), func(n int) bool { return n >= pods }), pods)
	var reports []Report
	var viewSync []float64 // the view's sync times at the top size, ms
	for _, n := range sizes {
		have, err := cl.seedStoredKind(ctx, kind, n, say)
		if err != nil {
			return nil, err
		}
		top := n == pods
		if top {
			full, noMF, stored, err := kind.sizes(ctx, cl.cs)
			if err != nil {
				return nil, err
			}
			say("%s is %d bytes of JSON as the server returns it, %d without managedFields, %d of protobuf as etcd stores it",
				kind.describe, full, noMF, stored)
		}
		runs, err := runMillionSides(ctx, self, cl, have, top, opts, say)
		if err != nil {
			return nil, err
		}
		if len(runs[MemOursView]) > 0 && len(runs[MemClientGo]) > 0 {
			reports = append(reports, curveReports(runs, n)...)
		}
		if top {
			reports = append(reports, millionReports(runs, opts.CapMB)...)
			for _, r := range runs[MemOursView] {
				viewSync = append(viewSync, r.Millis)
			}
		}
	}
	if !opts.SkipWarm {
		r, err := warmView(ctx, self, cl, pods, opts, viewSync, say)
		if err != nil {
			return nil, err
		}
		if r != nil {
			reports = append(reports, *r)
		}
	}
	say("the least memory available during the run (MemAvailable): %.1f GiB", gib(low.stop()))
	return reports, nil
}

// runMillionSides runs every side Count times (CurveCount below the top
// size) at n objects, alternating, a side that did not fit once; at the
// top size the view's children stay for a forced relist.
func runMillionSides(ctx context.Context, self []string, cl *cluster, n int, top bool, opts MillionOptions, say sayFunc) (memoryRuns, error) {
	runs := memoryRuns{}
	var digest string
	var floorBytes int64 // what the floor read, once it ran
	label := fmt.Sprintf("%d %s", n, opts.kind.name)
	count := opts.Count
	if !top {
		count = opts.CurveCount
	}
	capped := map[Side]bool{}
	for i := range count {
		for _, side := range alternating(i, opts.sides) {
			if capped[side] {
				say("%s run %d %-17s not run again: it did not fit in an earlier run at this size", label, i+1, side)
				continue
			}
			if err := settle(ctx, opts.Settle); err != nil {
				return nil, err
			}
			env := childEnv(ChildCapMBEnv, strconv.Itoa(opts.CapMB), ChildProgressEnv, "10s", ChildKindEnv, opts.kind.name,
				ChildProfileEnv, opts.ProfileDir)
			if floorBytes > 0 && side != MemOursMeta { // the same request as the floor's
				env = append(env, childEnv(ChildExpectBytesEnv, strconv.FormatInt(floorBytes, 10))...)
			}
			relist := top && side == MemOursView
			var onLine func(string) error
			if relist {
				env = append(env, childEnv(ChildRelistEnv, "true")...)
				forced := false
				onLine = func(line string) error {
					if line != relistReady || forced {
						return fmt.Errorf("unexpected line %q from the child", line)
					}
					forced = true
					say("%s run %d %s: synced; forcing a relist (apiserver stopped, etcd compacted, apiserver started)", label, i+1, side)
					return forceRelist(ctx, cl.env, nil)
				}
			}
			res, _, err := runChildJSON[MemResult](ctx, childRun{args: self, onLine: onLine,
				killAboveKB: int64(opts.CapMB) << 10 * 5 / 4,
				env:         append(childEnv(ChildSideEnv, string(side), ChildKubeconfigEnv, cl.kubeconfig, ChildPodsEnv, strconv.Itoa(n)), env...)})
			if errors.Is(err, ErrChildOverMemory) {
				// Reported as a stop at the guard: the memory it reached.
				say("%s run %d %s: %v", label, i+1, side, err)
				res = MemResult{Capped: true, PeakRSSKB: int64(opts.CapMB) << 10 * 5 / 4}
				err = nil
			}
			if err == nil && relist && (res.Relist == nil || res.Relist.Objects != n) {
				err = fmt.Errorf("%w: no relist of %d %s reported", ErrMismatch, n, opts.kind.name)
			}
			if err == nil && !res.Capped {
				err = checkMemResult(side, res, n, &digest)
			}
			if err != nil {
				return nil, fmt.Errorf("%s (%s, run %d): %w", label, side, i+1, err)
			}
			state := "synced"
			if res.Capped {
				state = fmt.Sprintf("STOPPED at the %d MB cap with %d of %d", opts.CapMB, res.Objects, n)
			}
			say("%s run %d %-17s %s  %8.0f ms  CPU %6.2f s  heap %7.0f B/obj  allocated %7.0f B/obj  peak RSS %7.1f MB",
				label, i+1, side, state, res.Millis, res.CPUSeconds, res.HeapPerObject(), res.AllocPerObject(), float64(res.PeakRSSKB)/1024)
			if rl := res.Relist; rl != nil {
				say("%s run %d %s relist %6.0f ms %-9s  live heap %6.1f -> %6.1f MB (%.2fx)  RSS %6.1f -> %6.1f MB (%.2fx, %s)  allocated %5.0f B/obj",
					label, i+1, side, rl.Millis, rl.Mode, mb(rl.SteadyHeap), mb(rl.PeakHeap), rl.heapRatio(),
					float64(rl.SteadyRSSKB)/1024, float64(rl.PeakRSSKB)/1024, rl.rssRatio(), rl.RSSMethod, rl.AllocPerObject())
			}
			if side == MemFloor {
				floorBytes = res.Bytes
			}
			capped[side] = res.Capped
			runs[side] = append(runs[side], res)
		}
	}
	return runs, nil
}

// availWatch samples MemAvailable every second and keeps the lowest.
type availWatch struct {
	quit chan struct{} // closed by stop
	done chan uint64   // receives the lowest, in bytes, when the goroutine ends
	low  uint64        // set by the first stop
}

func startAvailWatch() *availWatch {
	w := &availWatch{quit: make(chan struct{}), done: make(chan uint64, 1)}
	go func() { // Exits when stop closes quit.
		low := uint64(1<<63 - 1)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if kb, ok := readStatusKB("/proc/meminfo", "MemAvailable"); ok {
				low = min(low, uint64(kb)<<10)
			}
			select {
			case <-w.quit:
				w.done <- low
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// stop ends the sampling and returns the lowest MemAvailable seen; later
// calls return the same.
func (w *availWatch) stop() uint64 {
	if w.quit != nil {
		close(w.quit)
		w.low, w.quit = <-w.done, nil
	}
	return w.low
}

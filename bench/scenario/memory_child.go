package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	cgcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// The children of the memory scenarios (issue 13; see RunMemory). Each
// syncs every object of ChildKindEnv's kind (pods unless set) through one
// variant, measuring from just before it builds its client until its
// handler has been handed every object:
// wall time, process CPU time, and the live heap (after a full GC) minus
// the live heap before it started. With ChildRelistEnv set it then stays
// for a forced relist (see relistChild).

// Sides of the memory scenarios.
const (
	// MemFloor reads the objects the way kinformer's default lists them (a
	// streaming list: a watch with sendInitialEvents, protobuf) up to the
	// initial-events-end bookmark, and throws the bytes away.
	MemFloor Side = "mem-floor"
	// MemOurs is kinformer with default options: kube.NewFactory and
	// kube.Informer of the kind's full type (*corev1.Pod for pods).
	MemOurs Side = "mem-ours"
	// MemOursNoMF is MemOurs with InformerOptions.Transform
	// informer.DropManagedFields.
	MemOursNoMF Side = "mem-ours-nomf"
	// MemClientGo is client-go's shared informer factory, its clientset
	// speaking protobuf, as Kubernetes' own components do.
	MemClientGo Side = "mem-clientgo"
	// MemClientGoNoMF is MemClientGo with a transform
	// (informers.WithTransform) that clears managedFields.
	MemClientGoNoMF Side = "mem-clientgo-nomf"
)

// ChildRelistEnv=true makes a memory child stay after its sync for a
// forced relist (see relistChild).
const ChildRelistEnv = "KINFORMER_BENCH_CHILD_RELIST"

// relistReady is the line a relist child prints once it has measured its
// steady state; the parent then forces the relist.
const relistReady = "steady"

// relistTail is how long a relist child keeps sampling after its
// informer's resource version moved (the relist has filled the store):
// the queued replacements are still being applied then.
const relistTail = 3 * time.Second

// MemResult is what a memory child reports.
type MemResult struct {
	// Objects is how many objects were synced (the floor: read).
	Objects int `json:"objects"`
	// Bytes is what the floor read from the wire (0 for the others).
	Bytes int64 `json:"bytes,omitempty"`
	// Millis and CPUSeconds are the wall and process CPU time from just
	// before the client was built until the handler saw every object.
	Millis     float64 `json:"millis"`
	CPUSeconds float64 `json:"cpuSeconds"`
	// HeapBefore and HeapAfter are the live heap after a full GC before
	// the client was built and after the sync (runtime/metrics
	// /gc/heap/live:bytes).
	HeapBefore uint64 `json:"heapBefore"`
	HeapAfter  uint64 `json:"heapAfter"`
	// PeakRSSKB is VmHWM when the sync is done.
	PeakRSSKB int64 `json:"peakRSSKB,omitempty"`
	// AllocBytes is what the sync allocated on the heap, kept or garbage
	// (/gc/heap/allocs:bytes over the same span as Millis).
	AllocBytes uint64 `json:"allocBytes,omitempty"`
	// Digest is every object's key and resource version, hashed.
	Digest string `json:"digest"`
	// Relist is set by a relist child.
	Relist *RelistResult `json:"relist,omitempty"`
	// Capped is set when the child stopped before its sync was done,
	// because its RSS passed ChildCapMBEnv: Objects is then how many it
	// had received, Millis and CPUSeconds run until the stop, HeapAfter
	// is the live heap of the last garbage collection before it, and
	// PeakRSSKB the memory it reached (see capWatch).
	Capped bool `json:"capped,omitempty"`
	// ObjectsFromBytes says that a capped child's Objects is estimated
	// from the bytes it read (against the floor's bytes for all of them).
	ObjectsFromBytes bool `json:"objectsFromBytes,omitempty"`
}

// AllocPerObject is the heap allocated per synced object.
func (r MemResult) AllocPerObject() float64 {
	if r.Objects == 0 {
		return 0
	}
	return float64(r.AllocBytes) / float64(r.Objects)
}

// HeapPerObject is the heap retained per synced object.
func (r MemResult) HeapPerObject() float64 {
	if r.Objects == 0 {
		return 0
	}
	return (float64(r.HeapAfter) - float64(r.HeapBefore)) / float64(r.Objects)
}

// isMemorySide reports the sides memoryChild runs.
func isMemorySide(s Side) bool {
	switch s {
	case MemFloor, MemOurs, MemOursNoMF, MemOursMeta, MemClientGo, MemClientGoNoMF:
		return true
	}
	return isViewSide(s)
}

// memoryChild is a memory child's whole job; its result goes to w as one
// line of JSON, after any progress lines.
func memoryChild(ctx context.Context, side Side, w io.Writer) error {
	kubeconfig := os.Getenv(ChildKubeconfigEnv)
	kind, err := childKind()
	if err != nil {
		return err
	}
	want, err := strconv.Atoi(os.Getenv(ChildPodsEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", ChildPodsEnv, err)
	}
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: kubeconfig})
	if err != nil {
		return err
	}
	var res MemResult
	res.HeapBefore = liveHeap()
	allocs := readHeapAllocs()
	cpu := CPUTimer()
	start := time.Now()
	watch, err := startCapWatch(side, want, start)
	if err != nil {
		return err
	}
	defer watch.stop()
	watch.wrap(cfg)
	if side == MemFloor {
		n, bytes, err := readFloor(ctx, cfg, kind.path(), &watch.received)
		if err != nil {
			return err
		}
		res.Millis, res.CPUSeconds = sinceMillis(start), cpu().Seconds()
		res.AllocBytes = readHeapAllocs() - allocs
		res.Objects, res.Bytes = n, bytes
		res.HeapAfter = liveHeap()
		res.PeakRSSKB, _ = readStatusKB("/proc/self/status", "VmHWM")
		return json.NewEncoder(w).Encode(res)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var seen atomic.Int64
	all := make(chan struct{})
	added := func() {
		if seen.Add(1) == int64(want) {
			close(all)
		}
	}
	watch.seen = &seen
	inf, err := startMemInformer(ctx, kind, side, cfg, added, watch.counter())
	if err != nil {
		return err
	}
	defer inf.stop()
	select {
	case <-all:
	case <-watch.capped:
		return watch.cappedResult(res, cpu, w)
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(syncTimeout(want)):
		return fmt.Errorf("handler saw %d of %d %s after %v", seen.Load(), want, kind.name, syncTimeout(want))
	}
	watch.stop() // the sync is done: no more progress lines nor cap
	res.Millis, res.CPUSeconds = sinceMillis(start), cpu().Seconds()
	res.AllocBytes = readHeapAllocs() - allocs
	if err := writeAllocsProfile(side, "sync"); err != nil {
		return err
	}
	res.HeapAfter = liveHeap()
	res.PeakRSSKB, _ = readStatusKB("/proc/self/status", "VmHWM")
	keys := inf.keys()
	res.Objects, res.Digest = len(keys), keysDigest(keys)
	if os.Getenv(ChildRelistEnv) == "true" {
		if res.Relist, err = relistChild(ctx, inf, want, w); err != nil {
			return err
		}
		if err := writeAllocsProfile(side, "relist"); err != nil {
			return err
		}
	}
	runtime.KeepAlive(inf)
	return json.NewEncoder(w).Encode(res)
}

// memInformer is a running informer of one memory side.
type memInformer struct {
	// keys lists the cache: namespace/name@resourceVersion per object.
	keys func() []string
	// lastRV is the version the informer's store reflects.
	lastRV func() string
	// listMode, when set, says how the last list filled the store.
	listMode func() string
	// stop stops the informer and waits for it.
	stop func()
}

// startMemInformer builds side's informer of every object of kind with a
// handler that calls added on each add, and starts it. received, when
// set, is called for every object client-go's informer takes in (through
// a transform, which sees the objects of an initial list as they arrive,
// where the handler sees them only once the whole list is in).
func startMemInformer(ctx context.Context, kind *millionKind, side Side, cfg *rest.Config, added, received func()) (memInformer, error) {
	switch side {
	case MemOurs, MemOursNoMF:
		return kind.startFull(ctx, cfg, side == MemOursNoMF, added)
	case MemClientGo, MemClientGoNoMF:
		return startClientGo(ctx, kind, cfg, side == MemClientGoNoMF, added, received)
	case MemOursMeta:
		return startMeta(ctx, cfg, kind.res, added)
	}
	if isViewSide(side) {
		return kind.startView(ctx, cfg, added)
	}
	return memInformer{}, fmt.Errorf("unknown memory side %q", side)
}

// startClientGo starts client-go's shared informer factory's informer of
// kind, its clientset speaking protobuf, with a transform that clears
// managedFields when dropMF.
func startClientGo(ctx context.Context, kind *millionKind, cfg *rest.Config, dropMF bool, added, received func()) (memInformer, error) {
	c := *cfg
	c.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(&c)
	if err != nil {
		return memInformer{}, err
	}
	var opts []informers.SharedInformerOption
	if dropMF || received != nil {
		opts = append(opts, informers.WithTransform(func(obj any) (any, error) {
			if received != nil {
				received()
			}
			if m, ok := obj.(metav1.Object); ok && dropMF {
				m.SetManagedFields(nil)
			}
			return obj, nil
		}))
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, opts...)
	inf := kind.clientGo(f)
	if _, err := inf.AddEventHandler(cgcache.ResourceEventHandlerFuncs{AddFunc: func(any) { added() }}); err != nil {
		return memInformer{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	f.Start(ctx.Done())
	return memInformer{
		keys: func() []string {
			var keys []string
			for _, o := range inf.GetIndexer().List() {
				keys = append(keys, objectKey(o.(cache.Object)))
			}
			return keys
		},
		lastRV: inf.LastSyncResourceVersion,
		stop:   func() { cancel(); f.Shutdown() }, // Shutdown waits for the informers, which stop with ctx
	}, nil
}

// startOurs adds the counting handler to a factory's informer, starts the
// factory and returns the informer's memInformer.
func startOurs[T cache.Object](ctx context.Context, f *kube.Factory, inf *informer.Shared[T], added func()) (memInformer, error) {
	if _, err := inf.AddHandler(informer.HandlerFuncs[T]{AddFunc: func(T, bool) { added() }}, informer.HandlerOptions{}); err != nil {
		f.Shutdown()
		return memInformer{}, err
	}
	f.Start(ctx)
	return memInformer{
		keys:     func() []string { return cacheKeys(inf) },
		lastRV:   inf.LastSyncResourceVersion,
		listMode: func() string { return string(inf.Progress().Mode) },
		stop:     f.Shutdown,
	}, nil
}

// cacheKeys lists inf's cache as objectKey keys.
func cacheKeys[T cache.Object](inf *informer.Shared[T]) []string {
	objs := inf.Cache().List()
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = objectKey(o)
	}
	return keys
}

// objectKey is an object's namespace/name@resourceVersion.
func objectKey(o cache.Object) string {
	return o.GetNamespace() + "/" + o.GetName() + "@" + o.GetResourceVersion()
}

// liveHeap runs a full garbage collection and returns the heap it found
// live.
func liveHeap() uint64 {
	runtime.GC()
	return readHeapLive()
}

func sinceMillis(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1e3 }

// RelistResult is what a relist child measured.
type RelistResult struct {
	// Millis is the time from the parent's go-ahead until the informer's
	// resource version moved: the apiserver's restart, the 410, the list.
	Millis float64 `json:"millis"`
	// SteadyHeap is the live heap after a full GC before the relist;
	// PeakHeap the most the garbage collector found live during it
	// (/gc/heap/live:bytes, sampled every few milliseconds: it changes at
	// the end of each GC cycle).
	SteadyHeap uint64 `json:"steadyHeap"`
	PeakHeap   uint64 `json:"peakHeap"`
	// SteadyRSSKB is VmRSS before the relist, after the runtime returned
	// its free memory to the OS; PeakRSSKB the most it reached during it.
	SteadyRSSKB int64 `json:"steadyRSSKB"`
	PeakRSSKB   int64 `json:"peakRSSKB"`
	// RSSMethod says how PeakRSSKB was read: "clear_refs" (VmHWM reset
	// by writing 5 to /proc/self/clear_refs, read after the relist, also
	// taking the sampled maximum) or "sampled" (VmRSS every few ms).
	RSSMethod string `json:"rssMethod"`
	// Objects is the cache's size after the relist.
	Objects int `json:"objects"`
	// Mode is how kinformer's relist filled the store (streaming or
	// paged); empty for client-go.
	Mode string `json:"mode,omitempty"`
	// AllocBytes is what the process allocated on the heap from the
	// go-ahead until the sampling ended (relistTail after the version
	// moved): the relist's garbage and what it kept.
	AllocBytes uint64 `json:"allocBytes,omitempty"`
}

// AllocPerObject is the heap allocated per object of the relist.
func (r *RelistResult) AllocPerObject() float64 {
	if r.Objects == 0 {
		return 0
	}
	return float64(r.AllocBytes) / float64(r.Objects)
}

// writeAllocsProfile runs a collection and writes the allocation profile
// (every allocation since the process started, sampled) to allocs-SIDE-PHASE.prof in the
// ChildProfileEnv directory, when set: the relist's own allocations are
// its profile with the sync's as the base (go tool pprof -sample_index
// alloc_space -base allocs-SIDE-sync.prof allocs-SIDE-relist.prof).
func writeAllocsProfile(side Side, phase string) error {
	dir := os.Getenv(ChildProfileEnv)
	if dir == "" {
		return nil
	}
	// The profile is as of the last completed collection: one now makes
	// it hold every allocation until here.
	runtime.GC()
	f, err := os.Create(filepath.Join(dir, "allocs-"+string(side)+"-"+phase+".prof"))
	if err != nil {
		return err
	}
	err = pprof.Lookup("allocs").WriteTo(f, 0)
	return errors.Join(err, f.Close())
}

// relistChild measures the steady state of a synced informer, prints
// relistReady, and samples heap and RSS until the parent has forced a
// relist (its resource version moved) and relistTail has passed.
func relistChild(ctx context.Context, inf memInformer, want int, w io.Writer) (*RelistResult, error) {
	var res RelistResult
	runtime.GC()
	debug.FreeOSMemory()
	res.SteadyHeap = readHeapLive()
	res.SteadyRSSKB, _ = readStatusKB("/proc/self/status", "VmRSS")
	res.RSSMethod = "sampled"
	if resetPeakRSS() == nil {
		res.RSSMethod = "clear_refs"
	}
	steadyRV := inf.lastRV()
	allocs := readHeapAllocs()
	s := startSampler(5 * time.Millisecond)
	if _, err := fmt.Fprintln(w, relistReady); err != nil {
		s.stop()
		return nil, err
	}
	start := time.Now()
	deadline := time.After(syncTimeout(want))
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for inf.lastRV() == steadyRV {
		select {
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-deadline:
			s.stop()
			return nil, fmt.Errorf("no relist within %v of the go-ahead", syncTimeout(want))
		case <-tick.C:
		}
	}
	res.Millis = sinceMillis(start)
	select {
	case <-time.After(relistTail):
	case <-ctx.Done():
		s.stop()
		return nil, ctx.Err()
	}
	peak := s.stop()
	res.AllocBytes = readHeapAllocs() - allocs
	res.PeakHeap, res.PeakRSSKB = peak.heapLive, peak.rssKB
	if res.RSSMethod == "clear_refs" {
		if hwm, ok := readStatusKB("/proc/self/status", "VmHWM"); ok {
			res.PeakRSSKB = max(res.PeakRSSKB, hwm)
		}
	}
	res.Objects = len(inf.keys())
	if inf.listMode != nil {
		res.Mode = inf.listMode()
	}
	return &res, nil
}

package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/kinformer/kinformer/workqueue"
)

// ControllerRuntime is controller-runtime's priority queue
// (sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue, the default
// queue of its controllers since v0.23), a side of the restart storm.
const ControllerRuntime Side = "controller-runtime"

// The restart storm (issue 27): a controller restarts on a large cluster,
// its informer's initial list queues every object at low priority, and real
// changes keep arriving while the workers work through that backlog. How
// long does a real change wait?
//
// 100,000 keys are added at low priority (client-go's queue has no
// priorities: plain adds), then four workers drain them while one change a
// key every 10 ms (100/s, keys drawn from a seeded sequence, so every side
// gets the same ones) is added at normal priority, until every key of the
// backlog has been processed once and every change has been. A worker's
// reconcile is about 50 µs of CPU (a fixed arithmetic loop: the cost of a
// reconcile that finds nothing to do, which is what most of a restart's
// backlog is), so the backlog takes a few seconds on two cores.
//
// The value is the p99 of the time from a change's add to the start of the
// next processing of its key, in ms; the detail has the p50 and the number
// of changes. ours= is kinformer's queue, clientgo= controller-runtime's
// priority queue (the reference; ratio= divides by it), and
// client-go's rate-limiting queue is reported beside them.
func init() {
	Register(Scenario{
		Name:   "workqueue-restart-storm",
		Unit:   "ms",
		Target: Target{Op: AtMost, Value: 0.5},
		Sides:  []Side{Ours, ControllerRuntime, ClientGo},
		Note: "p99 from a change's add to its processing; clientgo= is controller-runtime's priority queue (the reference), " +
			"client-go's queue, which has no priorities, is the clientgo detail",
		Run: runRestartStorm,
	})
}

// stormQueue is what the storm needs from each side's queue.
type stormQueue interface {
	addLow(key string)
	addNormal(key string)
	get(ctx context.Context) (key string, ok bool)
	Done(key string)
	ShutDown()
}

type oursStorm struct{ *workqueue.Queue[string] }

func (q oursStorm) addLow(key string) {
	q.AddWithOptions(key, workqueue.AddOptions{Priority: workqueue.PriorityLow})
}
func (q oursStorm) addNormal(key string) { q.Add(key) }
func (q oursStorm) get(ctx context.Context) (string, bool) {
	key, err := q.Get(ctx)
	return key, err == nil
}

type crStorm struct {
	priorityqueue.PriorityQueue[string]
}

// crLow is the priority controller-runtime's handlers give initial adds
// (handler.LowPriority).
var crLow = -100

func (q crStorm) addLow(key string) {
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &crLow}, key)
}
func (q crStorm) addNormal(key string) { q.AddWithOpts(priorityqueue.AddOpts{}, key) }
func (q crStorm) get(context.Context) (string, bool) {
	key, shutdown := q.Get()
	return key, !shutdown
}

type clientGoStorm struct {
	cgworkqueue.TypedRateLimitingInterface[string]
}

func (q clientGoStorm) addLow(key string)    { q.Add(key) }
func (q clientGoStorm) addNormal(key string) { q.Add(key) }
func (q clientGoStorm) get(context.Context) (string, bool) {
	key, shutdown := q.Get()
	return key, !shutdown
}

func newStormQueue(side Side) stormQueue {
	switch side {
	case Ours:
		return oursStorm{workqueue.New(workqueue.Options[string]{})}
	case ControllerRuntime:
		// No name: no metrics, as on the other sides.
		return crStorm{priorityqueue.New[string]("")}
	}
	return clientGoStorm{cgworkqueue.NewTypedRateLimitingQueueWithConfig(
		cgworkqueue.DefaultTypedControllerRateLimiter[string](),
		cgworkqueue.TypedRateLimitingQueueConfig[string]{},
	)}
}

const (
	stormWorkers = 4
	// stormChangeEvery is the interval between real changes (100/s).
	stormChangeEvery = 10 * time.Millisecond
	// stormWork is the reconcile's loop count: about 50 µs of CPU on the
	// 2-core VM the figures come from.
	stormWork = 40_000
)

// reconcileWork burns about stormWork steps of CPU and returns a value the
// compiler cannot drop.
func reconcileWork(x uint64) uint64 {
	for range stormWork {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// reconcileSink keeps reconcileWork's results alive.
var reconcileSink atomic.Uint64

func runRestartStorm(ctx context.Context, side Side, size Size) (Result, error) {
	n := 2_000
	if size == Full {
		n = 100_000
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/obj-%d", i%100, i)
	}
	var (
		start = time.Now()
		// changedAt[i] is when (ns since start, plus 1) the first change
		// to key i not yet processed was added; 0 if none is pending.
		changedAt = make([]atomic.Int64, n)
		pending   atomic.Int64 // changes added, not yet processed
		processed = make([]atomic.Bool, n)
		left      atomic.Int64 // keys of the backlog not yet processed
		backlog   = make(chan struct{})
		waits     = make([][]time.Duration, stormWorkers) // per worker
		wg        sync.WaitGroup
		bad       atomic.Pointer[string]
	)
	left.Store(int64(n))
	q := newStormQueue(side)
	cpu := CPUTimer()
	for _, k := range keys {
		q.addLow(k)
	}
	for w := range stormWorkers {
		wg.Go(func() {
			var sink uint64
			for {
				key, ok := q.get(ctx)
				if !ok {
					break
				}
				i, found := keyIndex(key, n)
				if !found {
					bad.Store(&key)
					q.Done(key)
					continue
				}
				if at := changedAt[i].Swap(0); at != 0 {
					waits[w] = append(waits[w], time.Since(start)-time.Duration(at-1))
					pending.Add(-1)
				}
				if !processed[i].Swap(true) && left.Add(-1) == 0 {
					close(backlog)
				}
				sink ^= reconcileWork(uint64(i))
				q.Done(key)
			}
			reconcileSink.Add(sink)
		})
	}

	// Real changes at 100/s until the backlog is done, the first at once.
	// A producer that was not scheduled in time catches up, as an
	// informer's handler does with the events waiting for it: no change
	// is dropped.
	rng := rand.New(rand.NewPCG(27, 27))
	tick := time.NewTicker(stormChangeEvery)
	changes, begin := 0, time.Now()
	var err error
changing:
	for {
		for due := int(time.Since(begin)/stormChangeEvery) + 1; changes < due; changes++ {
			i := rng.IntN(n)
			if changedAt[i].CompareAndSwap(0, int64(time.Since(start))+1) {
				pending.Add(1)
			}
			q.addNormal(keys[i])
		}
		select {
		case <-tick.C:
		case <-backlog:
			break changing
		case <-ctx.Done():
			err = ctx.Err()
			break changing
		}
	}
	tick.Stop()
	for err == nil && pending.Load() > 0 {
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	q.ShutDown()
	wg.Wait()
	cpuUsed := cpu()
	if err != nil {
		return Result{}, err
	}
	if k := bad.Load(); k != nil {
		return Result{}, fmt.Errorf("%w: unknown key %q handed out", ErrMismatch, *k)
	}
	var all []time.Duration
	for _, w := range waits {
		all = append(all, w...)
	}
	if len(all) == 0 {
		return Result{}, fmt.Errorf("%w: no change was processed", ErrMismatch)
	}
	slices.Sort(all)
	p := func(q float64) float64 { return all[int(q*float64(len(all)-1))].Seconds() * 1e3 }
	return Result{
		// Every side processes every key of the backlog and every
		// change; how many changes fit in the backlog's time is not
		// compared.
		Digest: fmt.Sprintf("%d keys, every change processed", n),
		Value:  p(0.99),
		CPU:    cpuUsed,
		Detail: map[string]float64{
			"p50_ms":  p(0.5),
			"max_ms":  p(1),
			"changes": float64(changes),
			"drain_s": time.Since(start).Seconds(),
		},
	}, nil
}

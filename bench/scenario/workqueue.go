package scenario

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/kinformer/kinformer/workqueue"
)

// Scenario 6: add/get/done throughput of a controller's work queue, in two
// workloads. Both run one producer and workers that do no work, on each
// side's default controller rate-limiting queue without metrics:
//
//   - "workqueue" (workqueue_distinct.go): every add is of a new key, so
//     every add costs a full add/get/done cycle.
//   - "workqueue-sweep" (this file): the producer sweeps a fixed set of keys
//     round after round, as an informer's event handler does, so most adds
//     find the key already waiting and are de-duplicated.
//
// Each runs with 4 workers (the lines the issues name) and again with 1 and
// 16 ("workqueue-1w", "workqueue-sweep-16w", ...). Every run reports its
// CPU time per item ("cpu_ns_per_item" in the detail) beside the rate.
// The restart storm is in workqueue_storm.go.
func init() {
	for _, workers := range []int{4, 1, 16} {
		suffix := ""
		if workers != 4 {
			suffix = fmt.Sprintf("-%dw", workers)
		}
		Register(Scenario{
			Name:   "workqueue" + suffix,
			Unit:   "items/s",
			Target: Target{Op: AtLeast, Value: 1.5},
			Run: func(ctx context.Context, side Side, size Size) (Result, error) {
				return runWorkqueueDistinct(ctx, side, size, workers)
			},
		})
		Register(Scenario{
			Name:   "workqueue-sweep" + suffix,
			Unit:   "adds/s",
			Target: Target{Op: AtLeast, Value: 1.5},
			Run: func(ctx context.Context, side Side, size Size) (Result, error) {
				return runWorkqueueSweep(ctx, side, size, workers)
			},
		})
	}
}

// cpuPerItem is the Result.Detail entry of the CPU time per item, in ns.
const cpuPerItem = "cpu_ns_per_item"

// queue is what the workload needs from either side's queue.
type queue interface {
	Add(key string)
	// get returns ok false once the queue is shut down and empty.
	get(ctx context.Context) (key string, ok bool)
	Done(key string)
	drain(ctx context.Context) error
}

type oursQueue struct{ *workqueue.Queue[string] }

func (q oursQueue) get(ctx context.Context) (string, bool) {
	key, err := q.Get(ctx)
	return key, err == nil
}

func (q oursQueue) drain(ctx context.Context) error { return q.ShutDownWithDrain(ctx) }

type clientGoQueue struct {
	cgworkqueue.TypedRateLimitingInterface[string]
}

func (q clientGoQueue) get(context.Context) (string, bool) {
	key, shutdown := q.Get()
	return key, !shutdown
}

func (q clientGoQueue) drain(context.Context) error {
	q.ShutDownWithDrain()
	// The rate-limiting queue's ShutDownWithDrain does not stop its
	// delaying goroutine; only ShutDown does.
	q.ShutDown()
	return nil
}

func newQueue(side Side) queue {
	if side == Ours {
		return oursQueue{workqueue.New(workqueue.Options[string]{})}
	}
	return clientGoQueue{cgworkqueue.NewTypedRateLimitingQueueWithConfig(
		cgworkqueue.DefaultTypedControllerRateLimiter[string](),
		cgworkqueue.TypedRateLimitingQueueConfig[string]{},
	)}
}

// runWorkqueueSweep: one producer sweeps over a fixed set of object keys
// ("ns-N/obj-M") round after round, adding each key as fast as it can,
// while workers take keys and mark them done. Keys are re-added while
// waiting (de-duplicated) and while held by a worker (processed again after
// Done), as in a real controller.
//
// Before each add the producer records the key's round; a worker records
// the round it saw when it took the key. At the end every key must have
// been processed after its last add (seen the last round) and never held by
// two workers at once; the digest is the set of keys with the round each
// last saw, so both sides must agree on it. How many times a key was
// processed depends on timing and is not compared.
//
// The value is adds per second, from the first add until the queue has
// drained and every worker has returned.
func runWorkqueueSweep(ctx context.Context, side Side, size Size, workers int) (Result, error) {
	objects, rounds := 200, 10
	if size == Full {
		objects, rounds = 10_000, 500
	}
	keys := make([]string, objects)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/obj-%d", i%100, i)
	}
	var (
		round = make([]atomic.Int32, objects) // last round added, set before the add
		seen  = make([]atomic.Int32, objects) // round a worker saw, set while holding
		held  = make([]atomic.Bool, objects)  // set while a worker holds the key
		twice atomic.Bool                     // a key was held by two workers at once
		bad   atomic.Pointer[string]          // a key the workload never added
		wg    sync.WaitGroup
	)
	q := newQueue(side)
	start, cpu := time.Now(), CPUTimer()
	for range workers {
		wg.Go(func() {
			for {
				key, ok := q.get(ctx)
				if !ok {
					return
				}
				i, found := keyIndex(key, objects)
				if !found {
					bad.Store(&key)
				} else {
					if held[i].Swap(true) {
						twice.Store(true)
					}
					seen[i].Store(round[i].Load())
					held[i].Store(false)
				}
				q.Done(key)
			}
		})
	}
	for r := range int32(rounds) {
		for i, k := range keys {
			round[i].Store(r + 1)
			q.Add(k)
		}
	}
	err := q.drain(ctx)
	wg.Wait()
	elapsed, cpuUsed := time.Since(start), cpu()
	if err != nil {
		return Result{}, err
	}
	if k := bad.Load(); k != nil {
		return Result{}, fmt.Errorf("%w: unknown key %q handed out", ErrMismatch, *k)
	}
	if twice.Load() {
		return Result{}, fmt.Errorf("%w: a key was held by two workers at once", ErrMismatch)
	}
	h := sha256.New()
	for i := range objects {
		if got := seen[i].Load(); got != int32(rounds) {
			return Result{}, fmt.Errorf("%w: key %d last processed in round %d, last added in round %d",
				ErrMismatch, i, got, rounds)
		}
		fmt.Fprintf(h, "%s=%d;", keys[i], seen[i].Load())
	}
	return Result{
		Value:  float64(objects*rounds) / elapsed.Seconds(),
		Digest: hex.EncodeToString(h.Sum(nil)[:8]),
		CPU:    cpuUsed,
		Detail: map[string]float64{cpuPerItem: float64(cpuUsed.Nanoseconds()) / float64(objects*rounds)},
	}, nil
}

// keyIndex returns the number a key ends with. Parsing it keeps a big
// lookup table, and its cache misses, out of the measured loop.
func keyIndex(key string, n int) (int, bool) {
	i, err := strconv.Atoi(key[strings.LastIndexByte(key, '-')+1:])
	return i, err == nil && i >= 0 && i < n
}

package scenario

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// runWorkqueueDistinct: one producer adds distinct keys ("ns-N/obj-M") as
// fast as it can while workers take them and mark them done. A worker
// re-adds every eighth key the first time it holds it, exercising the
// "added while held" path, so on both sides those keys are processed
// exactly twice and the rest exactly once; the digest hashes the per-key
// counts. The queue is shut down with drain once all those processings have
// happened (an add after shutdown would be dropped).
//
// The value is processings per second, from the first add until the queue
// has drained and every worker has returned.
func runWorkqueueDistinct(ctx context.Context, side Side, size Size, workers int) (Result, error) {
	n := 2_000
	if size == Full {
		n = 300_000
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/obj-%d", i%100, i)
	}
	// counts[w][i] is how often worker w processed key i: one slice per
	// worker, so workers never write to memory another worker writes.
	counts := make([][]int32, workers)
	expected := int64(n + (n+7)/8)
	var (
		wg      sync.WaitGroup
		total   atomic.Int64
		allDone = make(chan struct{}) // closed by the worker completing the expected total
		bad     atomic.Pointer[string]
	)
	q := newQueue(side)
	start, cpu := time.Now(), CPUTimer()
	for w := range counts {
		counts[w] = make([]int32, n)
		mine := counts[w]
		wg.Go(func() {
			for {
				key, ok := q.get(ctx)
				if !ok {
					return
				}
				i, found := keyIndex(key, n)
				if !found {
					bad.Store(&key)
				} else {
					if i%8 == 0 && firstProcessing(counts, i) {
						q.Add(key)
					}
					mine[i]++
				}
				q.Done(key)
				if total.Add(1) == expected {
					close(allDone)
				}
			}
		})
	}
	for _, k := range keys {
		q.Add(k)
	}
	var err error
	select {
	case <-allDone:
	case <-ctx.Done():
		err = ctx.Err()
	}
	err = errors.Join(err, q.drain(ctx))
	wg.Wait()
	elapsed, cpuUsed := time.Since(start), cpu()
	if err != nil {
		return Result{}, err
	}
	if k := bad.Load(); k != nil {
		return Result{}, fmt.Errorf("%w: unknown key %q handed out", ErrMismatch, *k)
	}
	h := sha256.New()
	processed := 0
	for i := range n {
		var c int32
		for _, w := range counts {
			c += w[i]
		}
		want := int32(1)
		if i%8 == 0 {
			want = 2
		}
		if c != want {
			return Result{}, fmt.Errorf("%w: key %d processed %d times, want %d", ErrMismatch, i, c, want)
		}
		processed += int(c)
		fmt.Fprintf(h, "%s=%d;", keys[i], c)
	}
	return Result{
		Value:  float64(processed) / elapsed.Seconds(),
		Digest: hex.EncodeToString(h.Sum(nil)[:8]),
		CPU:    cpuUsed,
		Detail: map[string]float64{cpuPerItem: float64(cpuUsed.Nanoseconds()) / float64(processed)},
	}, nil
}

// firstProcessing reports whether no worker has processed key i yet.
// Reading other workers' counts is safe: the queue hands a key to one
// worker at a time, and the Done and Get between two holders order their
// accesses.
func firstProcessing(counts [][]int32, i int) bool {
	for _, c := range counts {
		if c[i] != 0 {
			return false
		}
	}
	return true
}

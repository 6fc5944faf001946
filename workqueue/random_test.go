package workqueue

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRandomizedConcurrentUse runs many producers and workers, with workers
// re-adding items (their own or others) while they hold them, and checks:
//   - no item is held by two workers at once;
//   - every change is seen: each item carries a version that producers bump
//     before adding it, and the last processing of each item must have seen
//     its final version (so no add is lost, and each item is processed at
//     least once after its last add);
//   - the queue ends empty.
//
// Half the workers Get with a context that another goroutine cancels at
// random, so handoffs race with cancellation; an item must never be lost
// to a cancelled Get.
func TestRandomizedConcurrentUse(t *testing.T) {
	for seed := range uint64(4) {
		t.Run("", func(t *testing.T) { runRandomized(t, seed) })
	}
}

func runRandomized(t *testing.T, seed uint64) {
	const (
		items     = 64
		producers = 6
		workers   = 6
		addsEach  = 1500
	)
	q := New(Options[int]{})
	var (
		version [items]atomic.Int64 // bumped before every add of the item
		seen    [items]atomic.Int64 // highest version a worker saw
		held    [items]atomic.Bool  // set while a worker holds the item
		handled atomic.Int64
	)
	// closing guards closed: adders hold it for reading across bump+Add, so
	// no bump can miss its Add because of the shutdown.
	var closing sync.RWMutex
	closed := false
	bumpAndAdd := func(item int) {
		closing.RLock()
		defer closing.RUnlock()
		if closed {
			return
		}
		version[item].Add(1)
		q.Add(item)
	}

	var (
		wg       sync.WaitGroup
		cancels  [workers]atomic.Pointer[context.CancelFunc]
		stop     = make(chan struct{}) // closed after the drain; ends the canceller
		canceled sync.WaitGroup
	)
	canceled.Go(func() {
		rng := rand.New(rand.NewPCG(seed, 99))
		for {
			select {
			case <-stop:
				return
			default:
			}
			if c := cancels[rng.IntN(workers)].Load(); c != nil {
				(*c)()
			}
			runtime.Gosched()
		}
	})
	errs := make(chan error, workers)
	for w := range workers {
		rng := rand.New(rand.NewPCG(seed, uint64(100+w)))
		wg.Go(func() {
			for {
				ctx, cancel := context.WithCancel(context.Background())
				if w%2 == 1 {
					cancels[w].Store(&cancel)
				}
				item, err := q.Get(ctx)
				cancel()
				if errors.Is(err, context.Canceled) {
					continue
				}
				if errors.Is(err, ErrShutDown) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				if held[item].Swap(true) {
					errs <- errors.New("item handed to two workers at once")
					q.Done(item)
					return
				}
				v := version[item].Load()
				for range rng.IntN(4) {
					runtime.Gosched()
				}
				if rng.IntN(4) == 0 {
					bumpAndAdd(item) // re-add while held
				}
				if rng.IntN(8) == 0 {
					bumpAndAdd(rng.IntN(items))
				}
				for {
					old := seen[item].Load()
					if v <= old || seen[item].CompareAndSwap(old, v) {
						break
					}
				}
				handled.Add(1)
				held[item].Store(false)
				q.Done(item)
			}
		})
	}
	var pwg sync.WaitGroup
	for p := range producers {
		rng := rand.New(rand.NewPCG(seed, uint64(p)))
		pwg.Go(func() {
			for range addsEach {
				bumpAndAdd(rng.IntN(items))
				if rng.IntN(16) == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	pwg.Wait()
	closing.Lock()
	closed = true
	closing.Unlock()
	if err := q.ShutDownWithDrain(context.Background()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(stop)
	canceled.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range items {
		if v, s := version[i].Load(), seen[i].Load(); v != s {
			t.Errorf("item %d: final version %d, last processed version %d", i, v, s)
		}
	}
	if n := q.Len(); n != 0 {
		t.Errorf("Len() = %d after drain", n)
	}
	t.Logf("seed %d: %d items processed", seed, handled.Load())
}

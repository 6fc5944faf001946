package cache

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestDeltaFIFOAndIndexerMatchModelOverRandomOperations runs 2 x 50,000 random
// operations — adds, updates, deletes, relists, resyncs, bad input, and pops
// that apply, fail or re-queue, some with more operations arriving while
// the popped key is processed — against a DeltaFIFO feeding an Indexer, and
// compares both with a simple model after every step: queued keys and their
// order, every key's deltas, isInInitialList and HasSynced, the indexer's
// objects and index contents, and that no deletion reaches an object
// already gone. It runs in rounds, each a new pipeline that starts with a
// relist (so HasSynced has an initial list to wait for) or a plain write,
// and each round twice: with the queue free to take its bulk path and kept
// on its general path (runTwice).
func TestDeltaFIFOAndIndexerMatchModelOverRandomOperations(t *testing.T) {
	const rounds, steps = 50, 1_000
	for r := range rounds {
		err := runTwice(func() *rand.Rand { return rand.New(rand.NewPCG(1, uint64(r))) }, func(p *pipeline) error {
			if r%5 != 0 {
				if err := p.relist(); err != nil {
					return fmt.Errorf("initial relist: %w", err)
				}
			}
			for i := range steps {
				if err := p.step(); err != nil {
					return fmt.Errorf("step %d: %w", i, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
	}
}

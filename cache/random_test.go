package cache

import (
	"math/rand/v2"
	"testing"
)

// TestDeltaFIFOAndIndexerMatchModelOverRandomOperations runs 100,000 random
// operations — adds, updates, deletes, relists, resyncs, bad input, and pops
// that apply, fail or re-queue, some with more operations arriving while
// the popped key is processed — against a DeltaFIFO feeding an Indexer, and
// compares both with a simple model after every step: queued keys and their
// order, every key's deltas, isInInitialList and HasSynced, the indexer's
// objects and index contents, and that no deletion reaches an object
// already gone. It runs in rounds, each a new pipeline that starts with a
// relist (so HasSynced has an initial list to wait for) or a plain write.
func TestDeltaFIFOAndIndexerMatchModelOverRandomOperations(t *testing.T) {
	const rounds, steps = 50, 2_000
	rng := rand.New(rand.NewPCG(1, 2))
	for r := range rounds {
		p := newPipeline(rng)
		if r%5 != 0 {
			if err := p.relist(); err != nil {
				t.Fatalf("round %d: initial relist: %v", r, err)
			}
		}
		for i := range steps {
			if err := p.step(); err != nil {
				t.Fatalf("round %d step %d: %v", r, i, err)
			}
		}
	}
}

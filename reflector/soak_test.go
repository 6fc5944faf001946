package reflector_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/reflector"
)

// soakOps is the number of random writes per soak run.
const soakOps = 5000

// TestReflectorSoakConvergesThroughRandomFaults writes thousands of random
// creates, updates and deletes to the fake source while faults fire at
// random, then checks that the store equals the source exactly once the
// source goes quiet.
func TestReflectorSoakConvergesThroughRandomFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts reflector.Options[obj]
	}{
		// A short back-off cap keeps the reflector cycling through faults
		// instead of waiting most of the run out.
		{"paged lists", reflector.Options[obj]{Settings: reflector.Settings{Streaming: reflector.StreamingOff, PageSize: 7, BackoffMax: 2 * time.Second}}},
		{"streaming lists", reflector.Options[obj]{Settings: reflector.Settings{Streaming: reflector.StreamingAuto, BackoffMax: 2 * time.Second}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seed := rand.Uint64()
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, seed))
			run(t, fake.Options[obj]{CompactionWindow: 40}, tc.opts, nil, func(h *harness) {
				soak(t, h, rng)
			})
		})
	}
}

// soak drives h's source with random writes and faults, then waits for
// convergence.
func soak(t *testing.T, h *harness, rng *rand.Rand) {
	const names = 60
	exists := map[string]bool{}
	for range soakOps {
		name := fmt.Sprintf("o%02d", rng.IntN(names))
		var err error
		switch {
		case !exists[name]:
			_, err = h.src.Create(cm(name))
			exists[name] = true
		case rng.IntN(3) == 0:
			_, err = h.src.Delete("ns", name)
			delete(exists, name)
		default:
			o := cm(name)
			o.Data = map[string]string{"v": fmt.Sprint(rng.Int())}
			_, err = h.src.Update(o)
		}
		if err != nil {
			t.Fatal(err)
		}
		if rng.IntN(30) == 0 {
			fault(h, rng)
		}
		switch rng.IntN(10) {
		case 0, 1, 2: // let fake time pass: back-offs run out, watches age
			time.Sleep(time.Duration(rng.IntN(2000)) * time.Millisecond)
		case 3, 4, 5: // let the reflector catch up with what is queued
			h.settle()
		}
	}
	// Quiet: no more writes or faults. Give the reflector fake time to
	// wait out any back-off and catch up.
	var got, want string
	for range 60 {
		h.pass(10 * time.Second)
		got, want = h.store.snapshot(), truth(h.src)
		if got == want && h.r.LastSyncResourceVersion() == h.src.ResourceVersion() {
			break
		}
	}
	if got != want {
		t.Fatalf("after 10 quiet minutes the store differs from the source:\nstore  %s\nsource %s", got, want)
	}
	st := h.src.Stats()
	t.Logf("faults survived: %d (%+v); errors reported: %d; lists %d, watches %d",
		st.Faults(), st, h.errs.len(), st.Lists, st.Watches)
	if st.Faults() == 0 || st.Expired == 0 {
		t.Fatalf("no faults fired: %+v", st)
	}
}

func fault(h *harness, rng *rand.Rand) {
	switch rng.IntN(9) {
	case 0:
		h.src.ResetWatches()
	case 1:
		h.src.DropNextEvent()
	case 2:
		h.src.CloseWatches()
	case 3:
		h.src.CloseNextWatches(1 + rng.IntN(2))
	case 4:
		h.src.Compact()
	case 5: // the server goes down for a while: streams break, dials fail
		h.src.RefuseFor(time.Duration(rng.IntN(5000)) * time.Millisecond)
		h.src.ResetWatches()
	case 6:
		h.src.SendError(fmt.Errorf("fake: too old: %w", listwatch.ErrExpired))
	case 7:
		h.src.InjectWrongType("*v1.Secret")
	case 8:
		h.src.Bookmark()
	}
}

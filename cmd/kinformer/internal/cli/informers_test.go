package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/reflector"
)

// A streaming list given up for a paged one, and a stalled watch
// restarted, are each said once, as what happened, not as a failure
// waiting for its end.
func TestHealthSaysOnceWhenAStreamingListFellBackOrAWatchWasRestarted(t *testing.T) {
	clock := newFakeClock("08:00:00")
	h := newHealth(testHost, nil, clock.now)
	h.failure("pods", reflectorErr("pods", listwatch.PhaseWatchStream,
		fmt.Errorf("streaming list: %w (no new object for 1m0s)", reflector.ErrInitialEventsTimeout)))
	clock.advance(time.Minute)
	h.failure("pods", reflectorErr("pods", listwatch.PhaseWatchStream,
		fmt.Errorf("%w (6m0s), reopening at %q", reflector.ErrWatchStalled, "42")))
	got := h.takeNotes()
	if len(got) != 2 ||
		!strings.Contains(got[0], "pods: streaming list: silent before the initial-events-end bookmark: falling back to a paged list (no new object for 1m0s)") ||
		!strings.Contains(got[1], "pods: watch stalled: nothing received past its timeout plus the bookmark interval (6m0s)") {
		t.Fatalf("said %q", got)
	}
	if c := h.conditions(); len(c) != 0 && strings.Contains(strings.Join(c, "\n"), "failing") {
		t.Errorf("a fallback is shown as an ongoing failure: %q", c)
	}
}

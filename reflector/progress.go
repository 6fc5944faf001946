package reflector

import (
	"sync"
	"time"
)

// ListMode is how a list fills the store.
type ListMode string

const (
	// ListPaged is a plain LIST, in one or more pages.
	ListPaged ListMode = "paged"
	// ListStreaming is a watch with initial events (sendInitialEvents).
	ListStreaming ListMode = "streaming"
)

// Progress is a snapshot of a reflector's lists: the one under way, or
// the last one, and what went wrong on the way. The zero value is a
// reflector that has not listed yet. Read it with Reflector.Progress (or
// an informer's Progress) as often as wanted: it is a copy.
type Progress struct {
	// Listing is true while a list that fills the store is under way.
	Listing bool
	// Mode is the current (or last) list's mode.
	Mode ListMode
	// Relist is true when the store had been filled before this list:
	// after an expired version, a failed watch, or a fallback.
	Relist bool
	// Started is when the current (or last) list started on the
	// reflector's clock; Finished when it filled the store (zero while
	// Listing, and when it failed).
	Started, Finished time.Time
	// Objects and Bytes count what the current (or last) list received:
	// objects listed or streamed, and their size on the wire where the
	// source reports it (kube sources do; 0 otherwise). Pages counts the
	// pages of a paged list.
	Objects, Bytes int64
	Pages          int
	// Remaining is the server's remainingItemCount on the last page: how
	// many objects are still to come. It is -1 when the server does not say
	// (streaming lists, lists served whole from the watch cache, selectors
	// other than by namespace).
	Remaining int64
	// Expected is the number of objects the list is expected to hold:
	// Objects + Remaining when the server gave Remaining, otherwise, for a
	// relist, what the previous list held (an estimate); -1 when unknown.
	Expected int64
	// Fallbacks counts, since Run, streaming lists abandoned for a paged
	// list: they failed, or went silent for Settings.InitialEventsTimeout
	// before their end bookmark. LastFallback is the last one's reason.
	Fallbacks    int
	LastFallback string
	// StalledWatches counts, since Run, watches closed and reopened because
	// nothing came through them for longer than their timeout plus
	// Settings.BookmarkInterval.
	StalledWatches int
}

// Rate returns the objects received per second by the current (or last)
// list, up to now (or to its end).
func (p Progress) Rate(now time.Time) float64 {
	end := now
	if !p.Listing && !p.Finished.IsZero() {
		end = p.Finished
	}
	d := end.Sub(p.Started).Seconds()
	if p.Started.IsZero() || d <= 0 {
		return 0
	}
	return float64(p.Objects) / d
}

// ETA estimates, while Listing, how long until the list is received,
// from Expected and the rate so far. ok is false when it cannot tell: no
// list under way, nothing received yet, or Expected unknown.
func (p Progress) ETA(now time.Time) (eta time.Duration, ok bool) {
	if !p.Listing || p.Expected < 0 {
		return 0, false
	}
	rate := p.Rate(now)
	if rate <= 0 {
		return 0, false
	}
	left := max(p.Expected-p.Objects, 0)
	return time.Duration(float64(left) / rate * float64(time.Second)), true
}

// progress is the reflector's Progress, updated by its list-watch loop and
// read by anyone.
type progress struct {
	mu sync.Mutex // guards the fields below
	p  Progress
	// filled is how many objects the last list that filled the store
	// held; -1 before the first.
	filled int64
}

func newProgress() *progress { return &progress{filled: -1} }

func (t *progress) snapshot() Progress {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.p
}

// begin records the start of a list of mode at now.
func (t *progress) begin(mode ListMode, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.p.Listing, t.p.Mode, t.p.Started, t.p.Finished = true, mode, now, time.Time{}
	t.p.Relist = t.filled >= 0
	t.p.Objects, t.p.Bytes, t.p.Pages, t.p.Remaining, t.p.Expected = 0, 0, 0, -1, t.filled
}

// page records a page of a paged list.
func (t *progress) page(objects int, bytes int64, remaining *int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.p.Objects += int64(objects)
	t.p.Bytes += bytes
	t.p.Pages++
	if remaining != nil {
		t.p.Remaining = *remaining
		t.p.Expected = t.p.Objects + *remaining
	} else if t.p.Remaining >= 0 {
		t.p.Remaining = 0 // the last page of a list that counted
		t.p.Expected = t.p.Objects
	}
}

// object records one object of a streaming list.
func (t *progress) object(bytes int64) {
	t.mu.Lock()
	t.p.Objects++
	t.p.Bytes += bytes
	t.mu.Unlock()
}

// end records the end of the list at now: filled, or not.
func (t *progress) end(filled bool, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.p.Listing = false
	if filled {
		t.p.Finished = now
		t.filled = t.p.Objects
	}
}

// fellBack records a streaming list given up for a paged one.
func (t *progress) fellBack(reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.p.Fallbacks++
	t.p.LastFallback = reason
}

// stalled records a watch restarted for silence.
func (t *progress) stalled() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.p.StalledWatches++
}

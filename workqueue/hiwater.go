package workqueue

// hiwater is a high-water mark that follows a count up at once and comes
// down slowly: by a factor of e every hiwaterDecay removals. The queue's
// table and rings give memory back only when they are much larger than
// their high-water mark, so a queue that keeps filling up and emptying
// (an informer's resync, a burst every second) keeps its memory instead of
// freeing and reallocating it every time, while one that had a single
// burst gives it back over the next few hundred thousand operations. The
// zero value is a mark at 0.
type hiwater struct {
	v uint64 // the mark, in units of 2^-16
}

// hiwaterDecay is how many removals bring the mark down by a factor of e.
// A queue swept over K keys again and again (fill, drain) keeps its
// memory as long as K is below about 1.4·hiwaterDecay; the bench's sweep
// has 10,000 keys.
const (
	hiwaterShift = 14
	hiwaterDecay = 1 << hiwaterShift
)

// up raises the mark to n if it is below.
func (h *hiwater) up(n int) {
	if x := uint64(n) << 16; x > h.v {
		h.v = x
	}
}

// down counts one removal.
func (h *hiwater) down() { h.v -= h.v >> hiwaterShift }

// get returns the mark.
func (h *hiwater) get() int { return int(h.v >> 16) }

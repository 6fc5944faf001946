package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/kinformer/kinformer/listwatch"
)

// health turns what the informers report — failures through their error
// handlers, back-off delays, successful lists and watches through the
// collector — into a few sentences for a person: that the server went
// away, once, with when the next try is; that it came back, and after how
// long; that a cache had to be relisted and when it has been. It never
// repeats the resource name and URL on every retry.
//
// It keeps two things: the current conditions (statusLines, for a view
// that redraws) and a log of notes (takeNotes, for a view that prints
// lines). A run goroutine prints the notes to out every second, unless a
// view holds the screen (hold).
//
// Methods are safe for concurrent use: reflectors call in from their own
// goroutines. Times come from now, so tests drive it without a real clock.
type health struct {
	host string
	now  func() time.Time

	// mu guards the fields below; it is never held while writing to out.
	mu sync.Mutex
	// down, downSince and downCause describe an outage in progress: the
	// server did not answer (connection refused, reset, not ready).
	down      bool
	downSince time.Time
	downCause string
	// remindAt is when takeNotes next says an outage still goes on, and
	// remindEvery how long after that the one after comes (doubling).
	remindAt    time.Time
	remindEvery time.Duration
	// upAt is when the last outage ended.
	upAt      time.Time
	informers map[string]*informerHealth
	// notes is the log, oldest first, at most maxNotes long.
	notes []note

	// outMu serializes writes to out (the run goroutine's, and a view's
	// while it holds the screen) and guards held. Lock order: outMu, then
	// mu.
	outMu sync.Mutex
	out   io.Writer
	held  bool
	// width, when out is a terminal, returns its width: notes are wrapped
	// to it rather than cut mid-word by the terminal.
	width func() int
}

// informerHealth is what health knows of one informer.
type informerHealth struct {
	// nextTry is when the reflector tries again, from its last back-off
	// delay; nextTryAt is when that delay was reported.
	nextTry, nextTryAt time.Time
	// failing: the last attempt failed for a reason other than an
	// unreachable server or an expired version; failPhase and failMsg say
	// how, failSince since when.
	failing   bool
	failPhase listwatch.Phase
	failMsg   string
	failSince time.Time
	// announced: a note about the current failure was handed out, so its
	// end deserves one too.
	announced bool
	// relist: the server no longer has the version the informer was at
	// (410 Gone), so the cache is being listed again, since relistSince.
	relist      bool
	relistSince time.Time
	// outage: the informer lost its connection during the current (or last)
	// outage and has not listed or watched since.
	outage bool
	// waiting: the server was back before this informer's next try, and a
	// note said when that try would be; the try deserves a note too.
	waiting bool
	// gone: the server answers 404 for the resource type (its definition
	// was deleted), since goneSince.
	gone      bool
	goneSince time.Time
}

// noteKind is what a note says.
type noteKind int

const (
	noteDown      noteKind = iota // the server stopped answering
	noteUp                        // it answers again, after d
	noteExpired                   // name must relist: its version is gone (410)
	noteResynced                  // name relisted n objects after an outage or a 410
	noteFailing                   // name fails with text (not an outage)
	noteRecovered                 // name works again, after d
	noteWarning                   // name reported text once (skipped object, handler panic)
	noteResumed                   // name watches again after an outage, without a relist
	noteGone                      // name's resource type is no longer served (404)
	noteBack                      // name's resource type is served again; n objects listed
)

// note is one entry of the log.
type note struct {
	at    time.Time
	kind  noteKind
	name  string
	text  string
	d     time.Duration
	n     int
	phase listwatch.Phase
	// repeats counts identical warnings folded into this one.
	repeats int
	// shown: takeNotes has handed the note out.
	shown bool
}

const (
	// maxNotes bounds the log.
	maxNotes = 50
	// recentNotes is how long a past event stays in the status area.
	recentNotes = time.Minute
	// firstReminder is how long an outage lasts before takeNotes first
	// says it still goes on; reminders then come at doubling intervals up
	// to maxReminder.
	firstReminder = time.Minute
	maxReminder   = 16 * time.Minute
	// failGrace is how long a failure other than an outage must last to be
	// told: a server shutting down first closes its watches (a blip that
	// the outage then explains), and a single failed retry is no news.
	failGrace = 3 * time.Second
)

func newHealth(host string, out io.Writer, now func() time.Time) *health {
	if now == nil {
		now = time.Now
	}
	h := &health{host: host, out: out, now: now, informers: make(map[string]*informerHealth)}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		h.width = func() int {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
				return w
			}
			return 80
		}
	}
	return h
}

func (h *health) informerLocked(name string) *informerHealth {
	ih, ok := h.informers[name]
	if !ok {
		ih = &informerHealth{}
		h.informers[name] = ih
	}
	return ih
}

func (h *health) addLocked(n note) {
	if n.kind == noteWarning {
		// An identical warning in the last minute is counted, not repeated.
		for i := len(h.notes) - 1; i >= 0 && n.at.Sub(h.notes[i].at) < recentNotes; i-- {
			if p := &h.notes[i]; p.kind == noteWarning && p.name == n.name && p.text == n.text && !p.shown {
				p.repeats++
				return
			}
		}
	}
	h.notes = append(h.notes, n)
	if over := len(h.notes) - maxNotes; over > 0 {
		h.notes = slices.Delete(h.notes, 0, over)
	}
}

// failure is informer name's error handler.
func (h *health) failure(name string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	ih := h.informerLocked(name)
	f := classifyFailure(err)
	switch f.kind {
	case failWarning:
		h.addLocked(note{at: now, kind: noteWarning, name: name, text: f.text})
	case failUnreachable:
		ih.outage = true
		ih.failing = false
		if !h.down {
			h.down, h.downSince = true, now
			h.remindEvery = firstReminder
			h.remindAt = now.Add(h.remindEvery)
			h.addLocked(note{at: now, kind: noteDown, text: f.text})
		}
		// The cause shown is the latest: a server that said it was
		// shutting down then refuses connections.
		h.downCause = f.text
	case failExpired:
		// A server that was away in the last minute restarted with a new
		// watch cache, which starts at the current version.
		restarted := h.down || ih.outage || (!h.upAt.IsZero() && now.Sub(h.upAt) < recentNotes)
		h.answeredLocked(now)
		ih.failing = false
		if !ih.relist {
			ih.relist, ih.relistSince = true, now
			n := note{at: now, kind: noteExpired, name: name}
			if restarted {
				n.text = "restarted"
			}
			h.addLocked(n)
		}
	case failGone:
		h.answeredLocked(now)
		ih.failing = false
		if !ih.gone {
			ih.gone, ih.goneSince = true, now
			h.addLocked(note{at: now, kind: noteGone, name: name})
		}
	default:
		if f.answered {
			h.answeredLocked(now)
		}
		if !ih.failing || ih.failMsg != f.text {
			ih.failing, ih.failPhase, ih.failMsg, ih.failSince, ih.announced = true, f.phase, f.text, now, false
			h.addLocked(note{at: now, kind: noteFailing, name: name, text: f.text, phase: f.phase})
		}
	}
}

// answeredLocked records that the server answered (a success, or an error
// only a running server gives), which ends an outage.
func (h *health) answeredLocked(now time.Time) {
	if h.down {
		h.down, h.upAt = false, now
		h.addLocked(note{at: now, kind: noteUp, d: now.Sub(h.downSince)})
	}
}

// backoff records that informer name waits d before its next try.
func (h *health) backoff(name string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	ih := h.informerLocked(name)
	ih.nextTry, ih.nextTryAt = now.Add(d), now
}

// watching records that informer name opened a watch.
func (h *health) watching(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	h.answeredLocked(now)
	ih := h.informerLocked(name)
	h.recoveredLocked(name, ih, now)
	if !ih.relist && ih.outage {
		// The watch resumed where it was: nothing was missed.
		if ih.waiting {
			h.addLocked(note{at: now, kind: noteResumed, name: name})
		}
		ih.outage, ih.waiting = false, false
	}
}

// listed records that informer name listed n objects into its cache.
func (h *health) listed(name string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	h.answeredLocked(now)
	ih := h.informerLocked(name)
	h.recoveredLocked(name, ih, now)
	switch {
	case ih.gone:
		h.addLocked(note{at: now, kind: noteBack, name: name, n: n})
	case ih.relist || ih.outage:
		h.addLocked(note{at: now, kind: noteResynced, name: name, n: n})
	}
	ih.gone, ih.relist, ih.outage, ih.waiting = false, false, false, false
}

func (h *health) recoveredLocked(name string, ih *informerHealth, now time.Time) {
	if !ih.failing {
		return
	}
	ih.failing = false
	if ih.announced {
		h.addLocked(note{at: now, kind: noteRecovered, name: name, d: now.Sub(ih.failSince)})
	}
}

// hold stops the run goroutine from printing notes, for a view that shows
// them itself (taking them with takeNotes or statusLines) while it owns
// the screen; release lets it print again.
func (h *health) hold() (release func()) {
	h.outMu.Lock()
	h.held = true
	h.outMu.Unlock()
	return func() {
		h.outMu.Lock()
		h.held = false
		h.outMu.Unlock()
	}
}

// print writes the notes not handed out yet to out, unless a view holds
// the screen.
func (h *health) print() {
	h.outMu.Lock()
	defer h.outMu.Unlock()
	if h.held || h.out == nil {
		return
	}
	for _, l := range h.takeNotes() {
		if h.width != nil {
			l = strings.Join(wrapWords(l, h.width()-1, "         "), "\n") // under the text, after the time
		}
		fmt.Fprintln(h.out, l)
	}
}

// run prints the notes every second until ctx is done, then once more.
func (h *health) run(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			h.print()
			return
		case <-t.C:
			h.print()
		}
	}
}

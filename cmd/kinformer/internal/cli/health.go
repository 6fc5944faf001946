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

// nextTryLocked describes when informers retry: "next try in 6s" for the
// soonest retry planned after since among names (every informer when names
// is empty), or "retrying" when none is planned.
func (h *health) nextTryLocked(now, since time.Time, names ...string) string {
	var soonest time.Time
	for name, ih := range h.informers {
		if len(names) > 0 && !slices.Contains(names, name) {
			continue
		}
		if ih.nextTryAt.Before(since) || !ih.nextTry.After(now) {
			continue
		}
		if soonest.IsZero() || ih.nextTry.Before(soonest) {
			soonest = ih.nextTry
		}
	}
	in := soonest.Sub(now)
	if soonest.IsZero() || in < 100*time.Millisecond {
		return "retrying"
	}
	if in >= 10*time.Second {
		return fmt.Sprintf("next try in %s, at %s", roundDuration(in), clockTime(soonest))
	}
	return "next try in " + roundDuration(in)
}

// renderLocked is a note as a sentence, at now; ok is false for a note
// that no longer holds (a failure that has already cleared).
func (h *health) renderLocked(n note, now time.Time) (text string, ok bool) {
	switch n.kind {
	case noteDown:
		return fmt.Sprintf("server %s unreachable (%s); %s", h.host, n.text, h.nextTryLocked(now, n.at)), true
	case noteUp:
		return fmt.Sprintf("reconnected to %s after %s", h.host, roundDuration(n.d)), true
	case noteExpired:
		ih := h.informers[n.name]
		when := h.nextTryLocked(now, n.at, n.name)
		if when == "retrying" || !ih.relist {
			when = "now"
		} else {
			when = strings.TrimPrefix(when, "next try ")
		}
		if n.text == "restarted" {
			return fmt.Sprintf("%s: the apiserver restarted and no longer has the cache's version; relisting %s", n.name, when), true
		}
		return fmt.Sprintf("%s: the server no longer has the cache's version (it compacted its history, or restarted); relisting %s", n.name, when), true
	case noteGone:
		ih := h.informers[n.name]
		if !ih.gone || !ih.goneSince.Equal(n.at) {
			return "", false // back already
		}
		when := h.nextTryLocked(now, n.at, n.name)
		when = strings.Replace(when, "next try in", "retrying in", 1)
		return fmt.Sprintf("%s: the server no longer has the resource type %q (was it deleted?); the cache keeps what it had, %s", n.name, typeOf(n.name), when), true
	case noteBack:
		return fmt.Sprintf("%s: the resource type is back, cache resynced, %s", n.name, plural(n.n, "object")), true
	case noteResynced:
		return fmt.Sprintf("%s: cache resynced, %s", n.name, plural(n.n, "object")), true
	case noteResumed:
		return fmt.Sprintf("%s: watching again, nothing missed", n.name), true
	case noteFailing:
		if !h.stillFailingLocked(n) {
			return "", false
		}
		h.informers[n.name].announced = true
		return fmt.Sprintf("%s: %s failed: %s; %s", n.name, n.phase, n.text, h.nextTryLocked(now, n.at, n.name)), true
	case noteRecovered:
		return fmt.Sprintf("%s: working again after %s", n.name, roundDuration(n.d)), true
	case noteWarning:
		t := n.name + ": " + n.text
		if n.repeats > 0 {
			t += fmt.Sprintf(" (%d more like it)", n.repeats)
		}
		return t, true
	}
	return "", false
}

// stillFailingLocked reports whether the failure n tells of still holds.
func (h *health) stillFailingLocked(n note) bool {
	ih := h.informers[n.name]
	return ih != nil && ih.failing && ih.failMsg == n.text
}

// waitingLocked describes the informers that lost the server and will try
// again later than now, which the server's being back does not hurry: one
// line each, led by prefix, and marks them waiting.
func (h *health) waitingLocked(now time.Time, prefix string) []string {
	var out []string
	for _, name := range h.namesLocked() {
		ih := h.informers[name]
		if !ih.outage || ih.relist || !ih.nextTry.After(now) {
			continue
		}
		ih.waiting = true
		out = append(out, fmt.Sprintf("%s%s: still in back-off from the outage; %s", prefix, name, h.nextTryLocked(now, time.Time{}, name)))
	}
	return out
}

func (h *health) namesLocked() []string {
	names := make([]string, 0, len(h.informers))
	for name := range h.informers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// takeNotes returns the notes not handed out yet, as lines led by their
// time, and a reminder when an outage has gone on for a while. A failure
// younger than failGrace that still holds is kept for a later call.
func (h *health) takeNotes() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	var out []string
	for i := range h.notes {
		n := &h.notes[i]
		if n.shown || (n.kind == noteFailing && now.Sub(n.at) < failGrace && h.stillFailingLocked(*n)) {
			continue
		}
		n.shown = true
		if t, ok := h.renderLocked(*n, now); ok {
			out = append(out, clockTime(n.at)+" "+t)
		}
		if n.kind == noteUp {
			out = append(out, h.waitingLocked(now, clockTime(n.at)+" ")...)
		}
	}
	if h.down && !now.Before(h.remindAt) {
		out = append(out, fmt.Sprintf("%s server %s still unreachable, for %s (%s); %s", clockTime(now), h.host,
			roundDuration(now.Sub(h.downSince)), h.downCause, h.nextTryLocked(now, h.downSince)))
		h.remindEvery = min(2*h.remindEvery, maxReminder)
		h.remindAt = now.Add(h.remindEvery)
	}
	return mergeNames(out)
}

// statusLines is what a redrawn view shows under its table: the conditions
// that hold now (an outage, caches relisting, failing informers), then the
// events of the last minute, newest last.
func (h *health) statusLines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	out := h.conditionsLocked(now)
	var recent []string
	for _, n := range h.notes {
		switch n.kind {
		case noteUp, noteResynced, noteRecovered, noteWarning, noteResumed, noteBack:
		default:
			continue
		}
		if now.Sub(n.at) > recentNotes {
			continue
		}
		if t, ok := h.renderLocked(n, now); ok {
			recent = append(recent, clockTime(n.at)+" "+t)
		}
	}
	// All of the last minute's: the view keeps as many as its height
	// allows (statsScreen).
	return append(out, mergeNames(recent)...)
}

// conditions is what holds now: an outage, caches relisting, informers
// failing.
func (h *health) conditions() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conditionsLocked(h.now())
}

func (h *health) conditionsLocked(now time.Time) []string {
	var out []string
	if h.down {
		out = append(out, fmt.Sprintf("server %s unreachable since %s (%s): %s · %s", h.host, clockTime(h.downSince),
			roundDuration(now.Sub(h.downSince)), h.downCause, h.nextTryLocked(now, h.downSince)))
	}
	var conditions []string
	for _, name := range h.namesLocked() {
		ih := h.informers[name]
		switch {
		case ih.outage && !h.down && ih.nextTry.After(now):
			conditions = append(conditions, fmt.Sprintf("%s: in back-off from the outage · %s", name, h.nextTryLocked(now, time.Time{}, name)))
		case ih.gone:
			conditions = append(conditions, fmt.Sprintf("%s: resource type %q gone since %s · %s", name, typeOf(name),
				clockTime(ih.goneSince), h.nextTryLocked(now, ih.goneSince, name)))
		case ih.relist:
			when := h.nextTryLocked(now, ih.relistSince, name)
			if when == "retrying" {
				when = "relisting now"
			} else {
				when = "relisting " + strings.TrimPrefix(when, "next try ")
			}
			conditions = append(conditions, fmt.Sprintf("%s: the server no longer has the cache's version · %s", name, when))
		case ih.failing && now.Sub(ih.failSince) >= failGrace:
			ih.announced = true
			conditions = append(conditions, fmt.Sprintf("%s: %s failing since %s: %s · %s", name, ih.failPhase,
				clockTime(ih.failSince), ih.failMsg, h.nextTryLocked(now, ih.failSince, name)))
		}
	}
	return append(out, mergeNames(conditions)...)
}

// mergeNames folds lines that differ only in the informer name before the
// first ": " (after an optional time) into one naming them all:
// "pods: x" and "configmaps: x" become "pods, configmaps: x".
func mergeNames(lines []string) []string {
	var out []string
	var rests []string
	for _, l := range lines {
		prefix, body := "", l
		if len(l) > 9 && l[2] == ':' && l[5] == ':' && l[8] == ' ' { // "15:04:05 "
			prefix, body = l[:9], l[9:]
		}
		name, rest, ok := strings.Cut(body, ": ")
		if ok && strings.Contains(name, " ") && !strings.Contains(name, " -n ") {
			ok = false // a sentence, not an informer name
		}
		if ok {
			if i := slices.Index(rests, prefix+"\x00"+rest); i >= 0 {
				p, b := out[i][:len(prefix)], out[i][len(prefix):]
				n, r, _ := strings.Cut(b, ": ")
				out[i] = p + n + ", " + name + ": " + r
				continue
			}
		}
		out = append(out, l)
		if ok {
			rests = append(rests, prefix+"\x00"+rest)
		} else {
			rests = append(rests, "\x01"+l)
		}
	}
	return out
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

// typeOf is the resource type of an informer's name ("gizmos.example.com"
// of "gizmos.example.com -n web"), as informerName writes it.
func typeOf(name string) string {
	t, _, _ := strings.Cut(name, " ")
	return t
}

// clockTime is t as a person reads it on a clock: 19:02:11.
func clockTime(t time.Time) string { return t.Format("15:04:05") }

// roundDuration rounds d for reading: 48s, 1m40s, 800ms.
func roundDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		d = d.Round(time.Second)
	default:
		d = d.Round(time.Minute)
	}
	s := d.String() // 1m40s, 2m0s, 1h5m0s
	if d%time.Minute == 0 {
		s = strings.TrimSuffix(s, "0s")
	}
	return s
}

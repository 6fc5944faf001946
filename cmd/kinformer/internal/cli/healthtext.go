package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// What health says: the notes and conditions it renders from the state
// health.go keeps, and the wording of times and durations in them.

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

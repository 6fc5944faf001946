package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// statsView draws frames: on a terminal, a table fitted to its width and
// redrawn in place on the alternate screen with a status area under it;
// otherwise, or with -o json or kv, lines appended for each refresh.
type statsView struct {
	w      io.Writer
	format string
	// redraw: draw in place on a terminal (table and wide formats).
	redraw bool
	// size returns the terminal's columns and rows, read at every draw so
	// a resize takes effect at the next refresh.
	size func() (width, height int)

	// onScreen: the alternate screen is in use (after the first draw,
	// until close).
	onScreen bool
	// last is the last frame drawn, which close prints on the normal
	// screen.
	last       statsFrame
	lastStatus []string
	drawn      bool
}

// Terminal control sequences the view emits (ECMA-48 and xterm's
// alternate screen).
const (
	enterAltScreen = "\x1b[?1049h\x1b[?25l" // alternate screen, cursor hidden
	leaveAltScreen = "\x1b[?25h\x1b[?1049l" // cursor shown, normal screen back
	cursorHome     = "\x1b[H"
	clearLineEnd   = "\x1b[K"
	clearScreenEnd = "\x1b[J"
)

// draw shows one frame and the status lines (a redrawn view only; the
// others leave status to the health printer).
func (v *statsView) draw(f statsFrame, status []string) {
	v.last, v.lastStatus, v.drawn = f, status, true
	switch {
	case v.format == statsJSONOut:
		var b strings.Builder
		for _, s := range f.informers {
			b.WriteString(formatStatsJSON(f.at, s, f.process))
			b.WriteByte('\n')
		}
		io.WriteString(v.w, b.String())
	case v.format == statsKVOut:
		var b strings.Builder
		for _, s := range f.informers {
			fmt.Fprintf(&b, "time=%s %s\n", f.at.UTC().Format(time.RFC3339), formatStatsLine(s, f.process))
		}
		io.WriteString(v.w, b.String())
	case !v.redraw:
		width, _ := v.size()
		io.WriteString(v.w, strings.Join(statsScreen(f, nil, v.format == statsWideOut, width, 0), "\n")+"\n")
	default:
		width, height := v.size()
		lines := statsScreen(f, status, v.format == statsWideOut, width, height)
		var b strings.Builder
		if !v.onScreen {
			b.WriteString(enterAltScreen)
			v.onScreen = true
		}
		// From the top-left corner, every line overwritten and cleared to
		// its end, then everything below cleared: whatever else reached
		// the screen since the last frame (another program's output, a
		// resize) is gone. No line reaches the last column, so none wraps,
		// and the last line ends without a newline, so nothing scrolls.
		b.WriteString(cursorHome)
		for i, l := range lines {
			if i > 0 {
				b.WriteString("\r\n")
			}
			b.WriteString(l)
			b.WriteString(clearLineEnd)
		}
		b.WriteString(clearScreenEnd)
		io.WriteString(v.w, b.String())
	}
}

// close leaves the alternate screen and prints the last frame on the
// normal screen, where it stays after the command exits.
func (v *statsView) close() {
	if !v.onScreen {
		return
	}
	v.onScreen = false
	width, _ := v.size()
	last := v.last
	last.final = true
	lines := statsScreen(last, v.lastStatus, v.format == statsWideOut, width, 0)
	io.WriteString(v.w, leaveAltScreen+strings.Join(lines, "\n")+"\n")
}

// statsColumn is one column of the stats table.
type statsColumn struct {
	header string
	cell   func(statSample) string
}

var statsColumns = []statsColumn{
	{"RESOURCE", func(s statSample) string { return s.name }},
	{"OBJECTS", func(s statSample) string {
		switch {
		case s.synced:
			return fmt.Sprint(s.objects)
		case s.total > 0:
			return fmt.Sprintf("%d/%d", s.listed, s.total)
		}
		return fmt.Sprint(s.listed)
	}},
	{"SYNCED", func(s statSample) string {
		if s.synced {
			return "in " + syncDuration(s.syncTime)
		}
		text := "syncing"
		if s.listRate > 0 { // 0: nothing received yet
			text += fmt.Sprintf(", %.0f/s", s.listRate)
		}
		if s.etaKnown {
			text += ", ETA " + roundDuration(s.eta)
		}
		return text
	}},
	{"ADDED/s", func(s statSample) string { return fmt.Sprintf("%.1f", s.addRate) }},
	{"MODIFIED/s", func(s statSample) string { return fmt.Sprintf("%.1f", s.modifyRate) }},
	{"DELETED/s", func(s statSample) string { return fmt.Sprintf("%.1f", s.deleteRate) }},
	{"BACKLOG", func(s statSample) string { return fmt.Sprint(s.backlog) }},
	{"MERGED", func(s statSample) string { return fmt.Sprint(s.merged) }},
	{"RV", func(s statSample) string {
		if s.rv == "" {
			return "-"
		}
		return s.rv
	}},
	{"LISTS", func(s statSample) string { return fmt.Sprint(s.lists) }},
	{"WATCHES", func(s statSample) string { return fmt.Sprint(s.watches) }},
	{"ERRORS", func(s statSample) string { return fmt.Sprint(s.errEvents) }},
	// STALLS counts streams given up for going silent: streaming lists
	// whose end bookmark never came (fell back to paged) and watches
	// restarted. Failed requests and their retries are ERRORS, not stalls.
	// The health notes say which, when each happens.
	{"STALLS", func(s statSample) string { return fmt.Sprint(s.stalls) }},
	// SHARD says who filters the --shard ranges: the server (only the
	// shard crosses the wire) or kinformer (everything crosses it, what is
	// outside is dropped before the cache). Shown only with --shard.
	// DROPPED counts the objects a client-side filter dropped. Both are
	// shown only with --shard.
	{shardHeader, func(s statSample) string {
		if s.shard == "" {
			return "-"
		}
		return s.shard
	}},
	{droppedHeader, func(s statSample) string { return fmt.Sprint(s.dropped) }},
	// CHECKPOINT says what the --checkpoint-dir checkpoint did: the file
	// the informer started from (objects and age), why one was refused,
	// or a cold start, then what was written. Shown with -o wide only,
	// and only with --checkpoint-dir.
	{checkpointHeader, func(s statSample) string {
		if s.ckpt == nil {
			return "-"
		}
		return s.ckpt.String()
	}},
}

const (
	shardHeader      = "SHARD"
	droppedHeader    = "DROPPED"
	checkpointHeader = "CHECKPOINT"
)

// narrowHeaders shorten the rate columns when the table does not fit.
var narrowHeaders = map[string]string{"ADDED/s": "ADD/s", "MODIFIED/s": "MOD/s", "DELETED/s": "DEL/s"}

// fitSteps are what a table too wide for the terminal gives up, in order,
// until it fits: a column (by header) or width of the RESOURCE column
// (names are then cut with "…"). What is left at the end is always shown:
// RESOURCE (at least 10 columns), OBJECTS, SYNCED, the rates, BACKLOG and
// (with --shard) SHARD.
var fitSteps = []struct {
	drop     string
	maxNames int
}{
	{drop: "STALLS"}, {drop: "LISTS"}, {drop: "WATCHES"}, {drop: droppedHeader}, {drop: "MERGED"}, {maxNames: 24}, {drop: "RV"}, {maxNames: 16},
	{drop: "ERRORS"}, {maxNames: 10},
}

const statsGap = 2

// statsScreen is the table view of a frame: a header, one row per
// informer, a line about the process, then the status lines. With width
// > 0 every line is shorter than width: headers are shortened, then
// columns dropped and names cut (fitSteps; not with wide), status lines
// wrapped, and anything still too long cut with "…". With height > 0 there
// are at most height lines: status lines give way first, then rows, which
// are summed up in one line.
func statsScreen(f statsFrame, status []string, wide bool, width, height int) []string {
	rows := make([][]string, 0, len(f.informers))
	for _, s := range f.informers {
		r := make([]string, len(statsColumns))
		for i, c := range statsColumns {
			r[i] = c.cell(s)
		}
		rows = append(rows, r)
	}
	headers := make([]string, len(statsColumns))
	for i, c := range statsColumns {
		headers[i] = c.header
	}
	sharded, checkpointed := false, false
	for _, s := range f.informers {
		sharded = sharded || s.shard != ""
		checkpointed = checkpointed || s.ckpt != nil
	}
	keep := make([]bool, len(statsColumns))
	for i := range keep {
		switch statsColumns[i].header {
		case shardHeader, droppedHeader:
			keep[i] = sharded
		case checkpointHeader:
			keep[i] = wide && checkpointed
		default:
			keep[i] = true
		}
	}
	colWidth := func(i int) int {
		w := utf8.RuneCountInString(headers[i])
		for _, r := range rows {
			w = max(w, utf8.RuneCountInString(r[i]))
		}
		return w
	}
	nameWidth := colWidth(0)
	total := func() int {
		t := nameWidth
		for i := 1; i < len(statsColumns); i++ {
			if keep[i] {
				t += statsGap + colWidth(i)
			}
		}
		return t
	}
	if width > 0 {
		limit := width - 1 // the last column stays empty: no line wraps
		if total() > limit {
			for i, h := range headers {
				if n, ok := narrowHeaders[h]; ok {
					headers[i] = n
				}
			}
		}
		for _, step := range fitSteps {
			if wide || total() <= limit {
				break
			}
			if step.maxNames > 0 {
				nameWidth = min(nameWidth, max(step.maxNames, limit-(total()-nameWidth)))
				continue
			}
			for i, h := range headers {
				if h == step.drop {
					keep[i] = false
				}
			}
		}
	}
	line := func(cells []string) string {
		var b strings.Builder
		for i, c := range cells {
			if !keep[i] {
				continue
			}
			w := colWidth(i)
			if i == 0 {
				w = nameWidth
				c = truncate(c, w)
			}
			if b.Len() > 0 {
				b.WriteString(strings.Repeat(" ", statsGap))
			}
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", w-utf8.RuneCountInString(c)))
		}
		return strings.TrimRight(b.String(), " ")
	}
	table := []string{line(headers)}
	for _, r := range rows {
		table = append(table, line(r))
	}
	process := fmt.Sprintf("heap %s · %d goroutines · up %s", bytesIEC(f.process.heapBytes), f.process.goroutines, roundDuration(f.process.uptime))
	if !f.final {
		process += " · Ctrl-C to stop"
	}
	foot := []string{"", process}
	var st []string
	if len(status) > 0 {
		st = []string{""}
		for _, l := range status {
			if width > 0 {
				st = append(st, wrapWords(l, width-1, "    ")...)
			} else {
				st = append(st, l)
			}
		}
	}
	if height > 0 {
		if len(table)+len(foot) > height {
			keepRows := max(0, height-len(foot)-2) // the header and the line saying what is cut
			table = append(table[:1+keepRows:1+keepRows], fmt.Sprintf("… %d more informers (a taller terminal shows them)", len(rows)-keepRows))
		}
		// Status lines give way first: only those that fit are shown.
		if room := height - len(table) - len(foot); room < 2 {
			st = nil
		} else if len(st) > room {
			st = st[:room]
		}
	}
	lines := append(append(table, foot...), st...)
	if width > 0 {
		for i, l := range lines {
			lines[i] = truncate(l, width-1)
		}
	}
	return lines
}

// syncDuration is how long a sync took, to the millisecond under a
// second: 48ms, 1.23s, 1m40s.
func syncDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return roundDuration(d)
}

// wrapWords breaks s at spaces into lines shorter than width runes, the
// lines after the first led by indent; a word too long for a line is cut
// later (see truncate).
func wrapWords(s string, width int, indent string) []string {
	var out []string
	line := ""
	for _, w := range strings.Split(s, " ") {
		switch {
		case line == "" || line == indent:
			line += w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= width:
			line += " " + w
		default:
			out = append(out, line)
			line = indent + w
		}
	}
	return append(out, line)
}

// truncate cuts s to at most n runes, ending it with "…" when cut.
func truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kinformer/kinformer/reflector"
)

// progressLine renders one informer's initial sync from its reflector's
// progress at now: objects so far, the rate, the total and an ETA when
// the total is known, the bytes received, the time the list has taken,
// and whether it is a paged list a streaming one fell back to. With a bar
// width and a known total it draws a bar for a terminal; without either,
// a plain line. The bar only grows: it shows objects received against
// the total, never a block moving to and fro.
func progressLine(name string, p reflector.Progress, now time.Time, barWidth int) string {
	text := "syncing " + name + ": " + strings.Join(progressParts(p, now), ", ")
	if bar := progressBar(p, barWidth); bar != "" {
		return bar + " " + text
	}
	return text
}

// progressParts are the pieces of a progress line, the most useful first.
func progressParts(p reflector.Progress, now time.Time) []string {
	var elapsed time.Duration
	if !p.Started.IsZero() {
		elapsed = now.Sub(p.Started)
	}
	items, total := p.Objects, p.Expected
	count := plural(int(items), "object")
	if total >= 0 && (total > 0 || p.Listing) {
		// Objects created during the list may take it past the total.
		count = fmt.Sprintf("%d/%s", items, plural(int(max(total, items)), "object"))
	}
	parts := []string{count, fmt.Sprintf("%.0f/s", p.Rate(now))}
	if eta, ok := p.ETA(now); ok {
		parts = append(parts, "ETA "+roundDuration(eta))
	}
	if p.Bytes > 0 {
		parts = append(parts, bytesIEC(uint64(p.Bytes)))
	}
	parts = append(parts, elapsed.Round(100*time.Millisecond).String())
	if p.Fallbacks > 0 {
		parts = append(parts, "paged (the streaming list fell back)")
	}
	return parts
}

// progressBar is "[██░░]" of width cells inside the brackets, filled as
// far as the objects received go towards the total; "" without a total.
func progressBar(p reflector.Progress, width int) string {
	if width <= 0 || p.Expected <= 0 {
		return ""
	}
	done := int(float64(width) * float64(min(p.Objects, p.Expected)) / float64(p.Expected))
	return "[" + strings.Repeat("█", done) + strings.Repeat("░", width-done) + "]"
}

// fitProgressLine is progressLine for a terminal width columns wide, in
// fewer than width runes so it never wraps. It gives up, in order, the
// least useful parts at the end (whether the list fell back, the time,
// the bytes), keeping a bar of 30, 20 or 10 cells while one fits, then
// the bar, then the ETA and the rate; only then is the name cut with "…".
func fitProgressLine(name string, p reflector.Progress, now time.Time, width int) string {
	limit := width - 1
	parts := progressParts(p, now)
	text := func(n int) string { return "syncing " + name + ": " + strings.Join(parts[:n], ", ") }
	core := min(len(parts), 3) // count, rate, ETA
	if _, ok := p.ETA(now); !ok {
		core = min(len(parts), 2)
	}
	for n := len(parts); n >= core; n-- {
		for _, bar := range []int{30, 20, 10} {
			if b := progressBar(p, bar); b != "" && utf8.RuneCountInString(b)+1+utf8.RuneCountInString(text(n)) <= limit {
				return b + " " + text(n)
			}
		}
	}
	for n := len(parts); n > 1; n-- {
		if utf8.RuneCountInString(text(n)) <= limit {
			return text(n)
		}
	}
	return truncate(text(1), limit)
}

// syncedLine is printed once an informer has synced.
func syncedLine(name string, objects int, took time.Duration) string {
	return fmt.Sprintf("synced %s: %s in %s", name, plural(objects, "object"), took.Round(time.Millisecond))
}

// progressPrinter draws a block of progress lines on a terminal, redrawn
// in place, with log lines printed above it for good; elsewhere it prints
// both plainly.
type progressPrinter struct {
	w        io.Writer
	terminal bool
	// width returns the terminal's width in columns; block lines are cut
	// to one less, so each takes exactly one row and none wraps.
	width func() int
	// drawn is the number of block lines on the terminal.
	drawn int
}

// draw prints log above the block and redraws the block as lines.
func (p *progressPrinter) draw(log, lines []string) {
	if !p.terminal {
		for _, l := range append(log, lines...) {
			fmt.Fprintln(p.w, l)
		}
		return
	}
	var b strings.Builder
	p.rewindTo(&b)
	for _, l := range log {
		b.WriteString(l)
		b.WriteString(clearLineEnd + "\n")
	}
	w := p.width()
	for _, l := range lines {
		b.WriteString(truncate(l, w-1)) // lines are fitted; this is a last resort
		b.WriteString(clearLineEnd + "\n")
	}
	b.WriteString(clearScreenEnd)
	p.drawn = len(lines)
	io.WriteString(p.w, b.String())
}

// rewindTo moves the cursor to the start of the block's first line.
func (p *progressPrinter) rewindTo(b *strings.Builder) {
	if p.drawn > 0 {
		fmt.Fprintf(b, "\x1b[%dA", p.drawn)
	}
	b.WriteString("\r")
}

// clear removes the block from the terminal.
func (p *progressPrinter) clear() {
	if !p.terminal || p.drawn == 0 {
		return
	}
	var b strings.Builder
	p.rewindTo(&b)
	b.WriteString(clearScreenEnd)
	p.drawn = 0
	io.WriteString(p.w, b.String())
}

package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kinformer/kinformer/reflector"
)

// progressLine renders one informer's initial sync from its reflector's
// progress at now: objects so far, the rate, the total and an ETA when
// the server announced how many remain, the bytes received, the time the
// list has taken, and whether it is a paged list a streaming one fell
// back to. With a bar width it draws a bar for a terminal; without, a
// plain line.
func progressLine(name string, p reflector.Progress, now time.Time, barWidth int) string {
	var elapsed time.Duration
	if !p.Started.IsZero() {
		elapsed = now.Sub(p.Started)
	}
	items, total := p.Objects, p.Expected
	count := plural(int(items), "object")
	if total > 0 {
		count = fmt.Sprintf("%d/%s", items, plural(int(total), "object"))
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
	text := fmt.Sprintf("syncing %s: %s", name, strings.Join(parts, ", "))
	if barWidth <= 0 {
		return text
	}
	var bar string
	if total > 0 {
		done := int(float64(barWidth) * float64(min(items, total)) / float64(total))
		bar = strings.Repeat("█", done) + strings.Repeat("░", barWidth-done)
	} else {
		// Total unknown: a block that moves, so the person sees life.
		pos := int(elapsed/(100*time.Millisecond)) % barWidth
		bar = strings.Repeat("░", pos) + "█" + strings.Repeat("░", barWidth-pos-1)
	}
	return "[" + bar + "] " + text
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
		b.WriteString(truncate(l, w-1))
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

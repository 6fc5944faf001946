package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progressLine renders one informer's initial sync: objects so far, the
// rate, and the total when the server announced it. With a bar width it
// draws a bar for a terminal; without, a plain line.
func progressLine(name string, items, total int64, elapsed time.Duration, barWidth int) string {
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(items) / s
	}
	count := fmt.Sprintf("%d", items)
	if total > 0 {
		count = fmt.Sprintf("%d/%d", items, total)
	}
	text := fmt.Sprintf("syncing %s: %s objects, %.0f/s, %s", name, count, rate, elapsed.Round(100*time.Millisecond))
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
	return fmt.Sprintf("synced %s: %d objects in %s", name, objects, took.Round(time.Millisecond))
}

// progressPrinter redraws progress lines on a terminal (one line per
// informer, rewritten in place) or prints them plainly every interval.
type progressPrinter struct {
	w        io.Writer
	terminal bool
	// drawn is the number of lines last drawn on the terminal.
	drawn int
}

func (p *progressPrinter) draw(lines []string) {
	if !p.terminal {
		for _, l := range lines {
			fmt.Fprintln(p.w, l)
		}
		return
	}
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn)
	}
	for _, l := range lines {
		b.WriteString("\r\x1b[2K")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	p.drawn = len(lines)
	io.WriteString(p.w, b.String())
}

// clear removes the lines drawn on a terminal.
func (p *progressPrinter) clear() {
	if !p.terminal || p.drawn == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\x1b[%dA", p.drawn)
	for range p.drawn {
		b.WriteString("\r\x1b[2K\n")
	}
	fmt.Fprintf(&b, "\x1b[%dA", p.drawn)
	p.drawn = 0
	io.WriteString(p.w, b.String())
}

package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"golang.org/x/term"
)

// syncWithProgress waits for g's initial sync, showing progress on
// streams.ErrOut: a redrawn bar per informer on a terminal, a plain line per
// informer every second otherwise, and, with report, a "synced" line per
// informer at the end. What goes wrong meanwhile (g.health) is printed above the bars, and
// what still holds (an outage, say) is shown under them. It returns
// waitSynced's error.
func syncWithProgress[T labeled](ctx context.Context, g *group[T], streams Streams, timeout time.Duration, host string, report bool) error {
	done := make(chan error, 1)
	// Owned here: waitSynced returns when the informers sync, fail, or ctx
	// ends, and this function always receives its result before returning.
	go func() { done <- g.waitSynced(ctx, timeout, host) }()

	// This function writes to ErrOut alone until it returns.
	defer g.health.hold()()
	p := &progressPrinter{w: streams.ErrOut, terminal: streams.ErrIsTerminal, width: errTerminalWidth(streams)}
	interval := time.Second
	if p.terminal {
		interval = 100 * time.Millisecond
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			p.clear()
			for _, l := range g.health.takeNotes() {
				fmt.Fprintln(streams.ErrOut, l)
			}
			if err != nil {
				return err
			}
			for _, l := range g.informers {
				if report {
					fmt.Fprintln(streams.ErrOut, syncedLine(l.name, l.inf.Cache().Len(), l.syncTime()))
				}
			}
			return nil
		case <-tick.C:
			lines := make([]string, 0, len(g.informers))
			width := 0
			if p.terminal {
				width = p.width() // read at each redraw: a resize takes effect at once
			}
			for _, l := range g.informers {
				if l.synced() {
					continue
				}
				if width > 0 {
					lines = append(lines, fitProgressLine(l.name, l.progress(), time.Now(), width))
				} else {
					lines = append(lines, progressLine(l.name, l.progress(), time.Now(), 0))
				}
			}
			if p.terminal {
				lines = append(lines, g.health.conditions()...)
			}
			p.draw(g.health.takeNotes(), lines)
		}
	}
}

// errTerminalWidth returns a function reading the width of the terminal
// streams.ErrOut is, falling back to streams.Width, or 80.
func errTerminalWidth(streams Streams) func() int {
	return func() int {
		if f, ok := streams.ErrOut.(*os.File); ok && streams.ErrIsTerminal {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
				return w
			}
		}
		if streams.Width > 0 {
			return streams.Width
		}
		return 80
	}
}

package cli

import (
	"io"
)

// tableFormat prints watch events as table rows: one table per resource,
// an EVENT column first. Every row lines up with the header printed last
// above it: the EVENT column is as wide as its longest word from the start,
// the other columns are sized from the objects found by the sync, and a
// later row with a wider cell widens its column and prints the header again
// (as does a row of another resource than the row before it, when watching
// several).
type tableFormat struct {
	sources *tableSources
	opts    viewOptions
	// tables holds each resource's table by target index.
	tables map[int]*watchTable
	// last is the target index of the last table a row was printed in, or
	// -1.
	last int
}

// watchTable is one resource's table.
type watchTable struct {
	view tableView
	rw   rowWriter
}

func newTableFormat(sources *tableSources, targets []target, wide bool) *tableFormat {
	return &tableFormat{sources: sources, tables: map[int]*watchTable{}, last: -1,
		opts: viewOptions{wide: wide, event: true, withKind: len(targets) > 1}}
}

// tableFor returns t's table, made anew when the server's columns changed
// (a custom resource's definition was edited).
func (f *tableFormat) tableFor(t target) *watchTable {
	cols := f.sources.columns(t.res.GVR)
	wt := f.tables[t.index]
	if wt != nil && sameColumns(wt.view.columns, cols) {
		return wt
	}
	wt = &watchTable{view: newTableView(t, cols, f.opts)}
	wt.rw.fit(wt.view.header())
	wt.rw.widths[0] = max(wt.rw.widths[0], eventWidth)
	f.tables[t.index] = wt
	if f.last == t.index {
		f.last = -1 // the header printed before is not this table's
	}
	return wt
}

func (f *tableFormat) start(w io.Writer, initial []printedEvent[*tableRow], show bool) error {
	for start := 0; start < len(initial); {
		end := start + 1
		for end < len(initial) && initial[end].target.index == initial[start].target.index {
			end++
		}
		t := initial[start].target
		wt := f.tableFor(t)
		rows := make([][]string, 0, end-start)
		for _, ev := range initial[start:end] {
			rows = append(rows, wt.view.row(ev.typ, ev.obj))
		}
		wt.rw.fit(rows...)
		if show {
			if err := f.header(w, wt, t.index); err != nil {
				return err
			}
			wt.rw.w = w
			for _, r := range rows {
				if err := wt.rw.write(r); err != nil {
					return err
				}
			}
		}
		start = end
	}
	return nil
}

func (f *tableFormat) event(w io.Writer, ev printedEvent[*tableRow]) error {
	wt := f.tableFor(ev.target)
	row := wt.view.row(ev.typ, ev.obj)
	if f.last != ev.target.index || !wt.rw.fits(row) {
		wt.rw.fit(row)
		if err := f.header(w, wt, ev.target.index); err != nil {
			return err
		}
	}
	wt.rw.w = w
	return wt.rw.write(row)
}

// header prints wt's header, after a blank line when another table was
// printed before.
func (f *tableFormat) header(w io.Writer, wt *watchTable, index int) error {
	if f.last != -1 && f.last != index {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	f.last = index
	wt.rw.w = w
	return wt.rw.write(wt.view.header())
}

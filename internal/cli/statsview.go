package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"time"
)

// statSample is what the stats view shows of one informer at one moment.
type statSample struct {
	// name is the informer's name for people; resource (plural, dotted
	// with the group) and namespace ("" for all) are for scripts.
	name, resource, namespace string
	objects                   int
	synced                    bool
	syncTime                  time.Duration
	// listed and total are the initial sync's progress while not synced.
	listed, total int64
	// Events received on watches since the start, and per second over the
	// last interval.
	added, modified, deleted          int64
	addRate, modifyRate, deleteRate   float64
	backlog                           int64
	merged, lists, watches, errEvents int64
	rv                                string
}

// processSample is the process-wide part of a sample.
type processSample struct {
	heapBytes  uint64
	goroutines int
	uptime     time.Duration
}

// statsFrame is one refresh of the view.
type statsFrame struct {
	at        time.Time
	informers []statSample
	process   processSample
}

// statsSampler reads a group's informers, keeping the previous counts to
// compute rates. It is used by one goroutine.
type statsSampler[T labeled] struct {
	g     *group[T]
	start time.Time
	last  time.Time
	prev  []statSample
	mem   []metrics.Sample
}

func newStatsSampler[T labeled](g *group[T]) *statsSampler[T] {
	now := time.Now()
	return &statsSampler[T]{
		g: g, start: now, last: now,
		prev: make([]statSample, len(g.informers)),
		mem:  []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}},
	}
}

func (s *statsSampler[T]) sample(now time.Time) statsFrame {
	elapsed := now.Sub(s.last).Seconds()
	s.last = now
	out := make([]statSample, len(s.g.informers))
	for i, l := range s.g.informers {
		c := l.counters
		st := statSample{
			name:      l.name,
			resource:  resourceName(l.target),
			namespace: l.target.namespace,
			objects:   l.inf.Cache().Len(),
			synced:    l.synced(),
			syncTime:  l.syncTime(),
			listed:    l.progress.items.Load(),
			total:     l.progress.total.Load(),
			added:     c.added.value(),
			modified:  c.modified.value(),
			deleted:   c.deleted.value(),
			backlog:   int64(c.backlog.value()),
			merged:    c.merged.value(),
			lists:     c.lists.value(),
			watches:   c.watches.value(),
			errEvents: c.errorEvents.value() + c.listErrors.value() + c.watchErrors.value(),
			rv:        l.inf.LastSyncResourceVersion(),
		}
		// Rates start once the informer was synced at the previous sample,
		// so the initial list (streamed as ADDED events) does not count.
		if p := s.prev[i]; elapsed > 0 && p.synced {
			st.addRate = float64(st.added-p.added) / elapsed
			st.modifyRate = float64(st.modified-p.modified) / elapsed
			st.deleteRate = float64(st.deleted-p.deleted) / elapsed
		}
		out[i] = st
	}
	s.prev = out
	metrics.Read(s.mem)
	ps := processSample{goroutines: runtime.NumGoroutine(), uptime: now.Sub(s.start)}
	if v := s.mem[0].Value; v.Kind() == metrics.KindUint64 {
		ps.heapBytes = v.Uint64()
	}
	return statsFrame{at: now, informers: out, process: ps}
}

// formatStatsLine is the plain, parseable form of a sample: space-separated
// key=value pairs, the same keys on every line, the resource first.
//
//	resource=pods namespace=* objects=150 synced=true sync=84ms added/s=2.0 modified/s=4.0 deleted/s=2.0 added=120 modified=240 deleted=118 backlog=0 merged=0 rv=4711 lists=1 watches=1 errors=0 heap=14.2MiB
func formatStatsLine(s statSample, p processSample) string {
	sync := "-"
	if s.synced {
		sync = s.syncTime.Round(time.Millisecond).String()
	}
	rv := s.rv
	if rv == "" {
		rv = "-"
	}
	ns := s.namespace
	if ns == "" {
		ns = "*"
	}
	return fmt.Sprintf("resource=%s namespace=%s objects=%d synced=%t sync=%s added/s=%.1f modified/s=%.1f deleted/s=%.1f added=%d modified=%d deleted=%d backlog=%d merged=%d rv=%s lists=%d watches=%d errors=%d heap=%s",
		s.resource, ns, s.objects, s.synced, sync, s.addRate, s.modifyRate, s.deleteRate,
		s.added, s.modified, s.deleted, s.backlog, s.merged, rv, s.lists, s.watches, s.errEvents, bytesIEC(p.heapBytes))
}

// bytesIEC formats n as KiB/MiB/GiB with one decimal.
func bytesIEC(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGT"[exp])
}

// statsView draws samples: a table redrawn in place on a terminal, plain
// lines otherwise.
type statsView struct {
	w        io.Writer
	terminal bool
	drawn    int
}

func newStatsView(streams Streams) *statsView {
	return &statsView{w: streams.Out, terminal: streams.OutIsTerminal}
}

func (v *statsView) draw(f statsFrame) {
	if !v.terminal {
		var b strings.Builder
		for _, s := range f.informers {
			fmt.Fprintf(&b, "time=%s %s\n", f.at.UTC().Format(time.RFC3339), formatStatsLine(s, f.process))
		}
		io.WriteString(v.w, b.String())
		return
	}
	lines := statsTable(f.informers, f.process)
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.drawn)
	}
	for _, l := range lines {
		b.WriteString("\r\x1b[2K")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	v.drawn = len(lines)
	io.WriteString(v.w, b.String())
}

// statsTable is the terminal view: a header, one row per informer, and a
// line about the process.
func statsTable(samples []statSample, p processSample) []string {
	rows := [][]string{{"RESOURCE", "OBJECTS", "SYNCED", "ADDED/s", "MODIFIED/s", "DELETED/s", "BACKLOG", "MERGED", "RV", "LISTS", "WATCHES", "ERRORS"}}
	for _, s := range samples {
		synced := fmt.Sprintf("in %s", s.syncTime.Round(time.Millisecond))
		objects := fmt.Sprint(s.objects)
		if !s.synced {
			synced = "syncing"
			objects = fmt.Sprintf("%d listed", s.listed)
			if s.total > 0 {
				objects = fmt.Sprintf("%d/%d listed", s.listed, s.total)
			}
		}
		rv := s.rv
		if rv == "" {
			rv = "-"
		}
		rows = append(rows, []string{s.name, objects, synced,
			fmt.Sprintf("%.1f", s.addRate), fmt.Sprintf("%.1f", s.modifyRate), fmt.Sprintf("%.1f", s.deleteRate),
			fmt.Sprint(s.backlog), fmt.Sprint(s.merged), rv, fmt.Sprint(s.lists), fmt.Sprint(s.watches), fmt.Sprint(s.errEvents)})
	}
	var sb strings.Builder
	rw := &rowWriter{w: &sb}
	rw.fit(rows)
	for _, r := range rows {
		rw.write(r)
	}
	lines := strings.Split(strings.TrimSuffix(sb.String(), "\n"), "\n")
	lines = append(lines, "", fmt.Sprintf("heap in use %s · %d goroutines · up %s · Ctrl-C to stop",
		bytesIEC(p.heapBytes), p.goroutines, p.uptime.Round(time.Second)))
	return lines
}

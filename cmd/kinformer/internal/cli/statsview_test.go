package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kinformer/kinformer/reflector"
)

func TestProgressLine(t *testing.T) {
	now := testNow
	started := now.Add(-2 * time.Second)
	for _, tc := range []struct {
		p    reflector.Progress
		bar  int
		want string
	}{
		{reflector.Progress{Listing: true, Started: started, Objects: 1500, Expected: -1},
			0, "syncing pods: 1500 objects, 750/s, 2s"},
		{reflector.Progress{Listing: true, Started: started, Objects: 500, Expected: 2000, Bytes: 3 << 20},
			0, "syncing pods: 500/2000 objects, 250/s, ETA 6s, 3.0MiB, 2s"},
		{reflector.Progress{Listing: true, Started: started, Objects: 1000, Expected: 2000},
			10, "[█████░░░░░] syncing pods: 1000/2000 objects, 500/s, ETA 2s, 2s"},
		{reflector.Progress{Listing: true, Mode: reflector.ListPaged, Started: started, Objects: 100, Expected: -1, Fallbacks: 1},
			0, "syncing pods: 100 objects, 50/s, 2s, paged (the streaming list fell back)"},
		{reflector.Progress{}, 0, "syncing pods: 0 objects, 0/s, 0s"},
	} {
		if got := progressLine("pods", tc.p, now, tc.bar); got != tc.want {
			t.Errorf("progressLine(%+v, bar %d) = %q, want %q", tc.p, tc.bar, got, tc.want)
		}
	}
	// Without a total there is no bar: nothing bounces to and fro.
	p := reflector.Progress{Listing: true, Started: now, Objects: 1, Expected: -1}
	if got := progressLine("p", p, now.Add(300*time.Millisecond), 10); strings.ContainsAny(got, "[█░") {
		t.Errorf("a bar without a total: %q", got)
	}
	// Objects created during the list take it past the total: the count
	// says so, the bar is full.
	p = reflector.Progress{Listing: true, Started: started, Objects: 2010, Expected: 2000}
	if got, want := progressLine("p", p, now, 10), "[██████████] syncing p: 2010/2010 objects, 1005/s, ETA 0s, 2s"; got != want {
		t.Errorf("past the total: %q, want %q", got, want)
	}
}

// On a terminal the progress line uses the width there is: the whole line
// and a 30-cell bar on a wide one; on a narrow one, the least useful parts
// go first, then the bar, never a line that wraps, and the text is cut
// with "…" only when nothing else can go.
func TestFitProgressLineUsesTheTerminalsWidth(t *testing.T) {
	now := testNow
	p := reflector.Progress{Listing: true, Started: now.Add(-4 * time.Second), Objects: 40000, Expected: 100000,
		Bytes: 90 << 20, Fallbacks: 1}
	const long = "pods.metrics.example.com -n production"
	for _, tc := range []struct {
		name  string
		width int
		want  string
	}{
		{long, 200, "[████████████░░░░░░░░░░░░░░░░░░] syncing " + long + ": 40000/100000 objects, 10000/s, ETA 6s, 90.0MiB, 4s, paged (the streaming list fell back)"},
		{long, 120, "[████░░░░░░] syncing " + long + ": 40000/100000 objects, 10000/s, ETA 6s, 90.0MiB, 4s"},
		{"pods", 100, "[████████████░░░░░░░░░░░░░░░░░░] syncing pods: 40000/100000 objects, 10000/s, ETA 6s, 90.0MiB, 4s"},
		{"pods", 80, "[████░░░░░░] syncing pods: 40000/100000 objects, 10000/s, ETA 6s, 90.0MiB, 4s"},
		{long, 80, "syncing " + long + ": 40000/100000 objects, 10000/s"},
		{"pods", 50, "syncing pods: 40000/100000 objects, 10000/s"},
		{"pods", 30, "syncing pods: 40000/100000 o…"},
	} {
		got := fitProgressLine(tc.name, p, now, tc.width)
		if got != tc.want {
			t.Errorf("%s on %d columns: %q, want %q", tc.name, tc.width, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n >= tc.width {
			t.Errorf("%s on %d columns: %d runes, want fewer", tc.name, tc.width, n)
		}
	}
}

func TestStatsLineIsParseable(t *testing.T) {
	s := statSample{name: "pods -n web", resource: "pods", namespace: "web", objects: 150, synced: true, syncTime: 84 * time.Millisecond,
		added: 120, modified: 240, deleted: 118, addRate: 2, modifyRate: 4.25, deleteRate: 2,
		backlog: 3, merged: 7, rv: "4711", lists: 1, watches: 2, fallbacks: 1, restarts: 2, stalls: 3}
	line := formatStatsLine(s, processSample{heapBytes: 15 << 20})
	kv := map[string]string{}
	for _, f := range strings.Fields(line) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("field %q is not key=value in %q", f, line)
		}
		kv[k] = v
	}
	want := map[string]string{"resource": "pods", "namespace": "web", "objects": "150", "synced": "true", "sync": "84ms",
		"added/s": "2.0", "modified/s": "4.2", "deleted/s": "2.0", "added": "120", "modified": "240", "deleted": "118",
		"backlog": "3", "merged": "7", "rv": "4711", "lists": "1", "watches": "2", "errors": "0", "heap": "15.0MiB",
		"fallbacks": "1", "restarts": "2", "stalls": "3"}
	for k, v := range want {
		if kv[k] != v {
			t.Errorf("%s=%q, want %q (line %q)", k, kv[k], v, line)
		}
	}
	unsynced := formatStatsLine(statSample{name: "cm", resource: "configmaps"}, processSample{})
	if !strings.Contains(unsynced, "resource=configmaps namespace=* ") || !strings.Contains(unsynced, "synced=false sync=- ") || !strings.Contains(unsynced, "rv=-") {
		t.Errorf("unsynced line %q", unsynced)
	}
}

func TestStatsJSONLine(t *testing.T) {
	s := statSample{resource: "pods", namespace: "web", objects: 150, synced: true, syncTime: 84 * time.Millisecond, addRate: 2, rv: "4711"}
	var got map[string]any
	if err := json.Unmarshal([]byte(formatStatsJSON(testNow, s, processSample{heapBytes: 1024})), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"time": "2026-11-21T12:00:00Z", "resource": "pods", "namespace": "web", "objects": 150.0, "synced": true,
		"syncSeconds": 0.084, "addedPerSecond": 2.0, "resourceVersion": "4711", "heapBytes": 1024.0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
	if _, ok := got["listed"]; ok {
		t.Error("a synced informer reports its listing progress")
	}
}

func TestBytesIEC(t *testing.T) {
	for n, want := range map[uint64]string{0: "0B", 1023: "1023B", 1536: "1.5KiB", 5 << 30: "5.0GiB"} {
		if got := bytesIEC(n); got != want {
			t.Errorf("bytesIEC(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestStatsOutputFormats(t *testing.T) {
	for _, o := range []string{"", "wide", "json", "kv"} {
		if err := validStatsOutput(o); err != nil {
			t.Errorf("-o %q: %v", o, err)
		}
	}
	if err := validStatsOutput("yaml"); err == nil || !strings.Contains(err.Error(), "wide, json, kv") {
		t.Errorf("-o yaml: %v", err)
	}
	for _, tc := range []struct {
		terminal, once bool
		output         string
		format         string
		redraw         bool
	}{
		{true, false, "", statsTableOut, true},
		{true, false, "wide", statsWideOut, true},
		{true, false, "json", statsJSONOut, false},
		{true, true, "", statsTableOut, false},
		{false, false, "", statsKVOut, false},
		{false, false, "wide", statsWideOut, false},
	} {
		v := newStatsView(Streams{OutIsTerminal: tc.terminal}, StatsOptions{Once: tc.once, Output: tc.output})
		if v.format != tc.format || v.redraw != tc.redraw {
			t.Errorf("terminal %t once %t -o %q: format %q redraw %t, want %q %t", tc.terminal, tc.once, tc.output, v.format, v.redraw, tc.format, tc.redraw)
		}
	}
}

// demoFrame is a frame with the informers of `make demo` and two with long
// names, the last one still syncing.
func demoFrame(at time.Time, tick int) statsFrame {
	return statsFrame{at: at, process: processSample{heapBytes: 14 << 20, goroutines: 31, uptime: time.Duration(tick) * time.Second},
		informers: []statSample{
			{name: "pods", objects: 90 + tick, synced: true, syncTime: 48 * time.Millisecond, addRate: 2, modifyRate: 4.5, deleteRate: 2,
				backlog: 0, merged: 3, rv: fmt.Sprint(4711 + 10*tick), lists: 1, watches: 2, errEvents: int64(tick / 2)},
			{name: "configmaps", objects: 91, synced: true, syncTime: 1234 * time.Millisecond, addRate: 1.5, modifyRate: 3, deleteRate: 1.5,
				backlog: 12, rv: fmt.Sprint(4712 + 10*tick), lists: 1, watches: 1},
			{name: "deployments.apps -n kinformer-demo-with-a-long-namespace", objects: 3, synced: true, syncTime: 9 * time.Millisecond, rv: "4700", lists: 1, watches: 1},
			{name: "widgets.stable.example.kinformer.dev", listed: 4000, total: 10000, lists: 2},
		}}
}

// checkScreen checks what a terminal shows of the stats view: the table at
// the top, once, no row reaching the last column, every informer once.
func checkScreen(t *testing.T, term *vt, width int, wantColumns, names []string) []string {
	t.Helper()
	if p := term.problems(); len(p) > 0 {
		t.Errorf("the terminal did not understand %q", p)
	}
	screen := term.lines()
	if !strings.HasPrefix(screen[0], "RESOURCE") {
		t.Errorf("first row %q is not the header; screen:\n%s", screen[0], term.text())
	}
	headers := 0
	for i, row := range screen {
		if n := utf8.RuneCountInString(row); n >= width {
			t.Errorf("row %d is %d columns wide on a %d-column terminal: %q", i, n, width, row)
		}
		if strings.HasPrefix(row, "RESOURCE") {
			headers++
		}
	}
	if headers != 1 {
		t.Errorf("%d header rows on the screen:\n%s", headers, term.text())
	}
	for _, c := range wantColumns {
		if !slices.Contains(strings.Fields(screen[0]), c) {
			t.Errorf("header %q lacks column %s", screen[0], c)
		}
	}
	for _, name := range names {
		n := 0
		for _, row := range screen {
			if strings.HasPrefix(row, name) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d rows for %q:\n%s", n, name, term.text())
		}
	}
	return screen
}

// flat is the screen's text with runs of blanks and line ends as one
// space, so that a wrapped status line reads as one.
func flat(term *vt) string { return strings.Join(strings.Fields(term.text()), " ") }

// TestStatsViewOn80Columns draws the live view on a virtual 80x24 terminal
// while an outage is reported and another program writes to the same
// terminal, and checks each screen a person would see, then the normal
// screen after exit.
func TestStatsViewOn80Columns(t *testing.T) {
	const width, height = 80, 24
	term := newVT(width, height)
	fmt.Fprint(term, "$ kinformer stats pods,configmaps,deploy,widgets -A\n")
	clock := newFakeClock("19:02:00")
	h := newHealth(testHost, term, clock.now)
	release := h.hold()
	defer release()
	v := newStatsView(Streams{Out: term, ErrOut: term, OutIsTerminal: true, ErrIsTerminal: true, Width: width}, StatsOptions{})
	v.size = func() (int, int) { return width, height }
	names := []string{"pods ", "configmaps ", "deployments.apps -", "widgets.stable.exa"}
	narrow := []string{"RESOURCE", "OBJECTS", "SYNCED", "BACKLOG", "ERRORS"}

	v.draw(demoFrame(clock.now(), 1), h.statusLines())
	screen := checkScreen(t, term, width, narrow, names)
	if !strings.Contains(term.text(), "4000/10000") || !strings.Contains(term.text(), "syncing") {
		t.Errorf("the syncing informer's progress is not shown:\n%s", term.text())
	}
	if !strings.HasPrefix(screen[6], "heap 14.0MiB · 31 goroutines · up 1s") {
		t.Errorf("process line %q", screen[6])
	}

	// The apiserver goes away: both informers fail, again and again.
	clock.advance(11 * time.Second)
	for range 3 {
		for _, name := range []string{"pods", "configmaps"} {
			h.failure(name, refused(name))
			h.backoff(name, 6*time.Second)
		}
	}
	// Something else in the process writes to the terminal (a library's
	// log line, longer than the terminal is wide).
	before := term.wrapCount()
	fmt.Fprintf(term, "W1123 19:02:11.123456   12345 reflector.go:561] k8s.io/client-go: failed to list *v1.Pod: %s\n", strings.Repeat("x", 60))
	stray := term.wrapCount() - before
	clock.advance(time.Second)
	v.draw(demoFrame(clock.now(), 2), h.statusLines())
	checkScreen(t, term, width, narrow, names)
	text := flat(term)
	if strings.Contains(text, "reflector.go") {
		t.Errorf("another program's line survived the redraw:\n%s", text)
	}
	if n := strings.Count(text, "connection refused"); n != 1 {
		t.Errorf("the outage is told %d times:\n%s", n, text)
	}
	if !strings.Contains(text, "unreachable since 19:02:11 (1s): connection refused · next try in 5s") {
		t.Errorf("no outage status:\n%s", text)
	}

	// The server comes back; one cache must relist after a long back-off.
	clock.advance(47 * time.Second)
	h.watching("pods")
	h.watching("configmaps")
	h.failure("configmaps", gone("configmaps"))
	h.backoff("configmaps", 52*time.Second)
	v.draw(demoFrame(clock.now(), 3), h.statusLines())
	checkScreen(t, term, width, narrow, names)
	text = flat(term)
	for _, want := range []string{"reconnected to https://127.0.0.1:6443 after 48s", "configmaps: the server no longer has the cache's version · relisting in 52s, at 19:03:51"} {
		if !strings.Contains(text, want) {
			t.Errorf("screen lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "connection refused") {
		t.Errorf("the outage is still shown after the reconnection:\n%s", text)
	}
	clock.advance(52 * time.Second)
	h.listed("configmaps", 91)
	v.draw(demoFrame(clock.now(), 4), h.statusLines())
	checkScreen(t, term, width, narrow, names)
	if !strings.Contains(flat(term), "19:03:51 configmaps: cache resynced, 91 objects") {
		t.Errorf("no resync note:\n%s", term.text())
	}

	// Ctrl-C: the normal screen comes back with what was on it, and the
	// last frame under it.
	v.close()
	screen = term.lines()
	if screen[0] != "$ kinformer stats pods,configmaps,deploy,widgets -A" || !strings.HasPrefix(screen[1], "RESOURCE") {
		t.Errorf("after exit the screen shows:\n%s", term.text())
	}
	if strings.Contains(term.text(), "reflector.go") {
		t.Errorf("the normal screen got the log line written during the view:\n%s", term.text())
	}
	if strings.Contains(term.text(), "Ctrl-C") {
		t.Errorf("the last frame, left after exit, still says Ctrl-C to stop:\n%s", term.text())
	}
	for i, row := range screen {
		if utf8.RuneCountInString(row) >= width {
			t.Errorf("row %d of the final frame wraps: %q", i, row)
		}
	}
	if term.wrapCount() != stray {
		t.Errorf("%d wraps, want only the other program's %d", term.wrapCount(), stray)
	}
}

// TestStatsViewOn170Columns: a wide terminal shows every column and every
// name in full.
func TestStatsViewOn170Columns(t *testing.T) {
	const width, height = 170, 40
	term := newVT(width, height)
	v := newStatsView(Streams{Out: term, OutIsTerminal: true, Width: width}, StatsOptions{})
	v.size = func() (int, int) { return width, height }
	v.draw(demoFrame(testNow, 1), nil)
	checkScreen(t, term, width, []string{"RESOURCE", "OBJECTS", "SYNCED", "ADDED/s", "MODIFIED/s", "DELETED/s", "BACKLOG", "MERGED", "RV", "LISTS", "WATCHES", "ERRORS", "STALLS"},
		[]string{"pods ", "configmaps ", "deployments.apps -n kinformer-demo-with-a-long-namespace ", "widgets.stable.example.kinformer.dev "})
	if strings.Contains(term.text(), "…") {
		t.Errorf("something was cut on a wide terminal:\n%s", term.text())
	}
	if h := strings.Fields(term.lines()[0]); slices.Contains(h, "SHARD") || slices.Contains(h, "DROPPED") {
		t.Errorf("shard columns shown without --shard: %q", term.lines()[0])
	}
}

// TestStatsViewShowsTheShardMode: with --shard, the view says who filters
// each informer's shard, on 80 columns too, and the line formats carry it.
func TestStatsViewShowsTheShardMode(t *testing.T) {
	f := demoFrame(testNow, 1)
	modes := []string{"server", "client", "probing", "server"}
	for i := range f.informers {
		f.informers[i].shard = modes[i]
	}
	f.informers[1].dropped = 13333
	for _, width := range []int{80, 170} {
		term := newVT(width, 24)
		v := newStatsView(Streams{Out: term, OutIsTerminal: true, Width: width}, StatsOptions{})
		v.size = func() (int, int) { return width, 24 }
		v.draw(f, nil)
		screen := checkScreen(t, term, width, []string{"RESOURCE", "OBJECTS", "SHARD"}, []string{"pods ", "configmaps "})
		col := strings.Index(screen[0], "SHARD")
		for i, want := range modes {
			if got := strings.Fields(screen[1+i][col:])[0]; got != want {
				t.Errorf("%d columns, row %d: SHARD %q, want %q\n%s", width, i, got, want, term.text())
			}
		}
		if width == 170 && !strings.Contains(screen[2], "13333") {
			t.Errorf("the dropped count is not shown on a wide terminal: %q", screen[2])
		}
	}
	line := formatStatsLine(f.informers[1], f.process)
	if !strings.Contains(line, " shard=client dropped=13333 ") {
		t.Errorf("kv line %q lacks the shard mode", line)
	}
	if line := formatStatsLine(statSample{resource: "pods"}, processSample{}); !strings.Contains(line, " shard=- dropped=0 ") {
		t.Errorf("kv line without --shard: %q", line)
	}
	var j map[string]any
	if err := json.Unmarshal([]byte(formatStatsJSON(testNow, f.informers[1], f.process)), &j); err != nil || j["shard"] != "client" || j["dropped"] != 13333.0 {
		t.Errorf("json line: %v, %v", j, err)
	}
}

func TestStatsScreenKeepsToTheTerminalsHeight(t *testing.T) {
	f := demoFrame(testNow, 1)
	for i := range 30 {
		f.informers = append(f.informers, statSample{name: fmt.Sprintf("things%02d", i), synced: true})
	}
	lines := statsScreen(f, []string{"status one", "status two"}, false, 80, 24)
	if len(lines) != 24 {
		t.Fatalf("%d lines for 24 rows:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if !strings.HasPrefix(lines[21], "… 14 more informers") || lines[22] != "" || !strings.HasPrefix(lines[23], "heap") {
		t.Errorf("the cut:\n%s", strings.Join(lines, "\n"))
	}
	// Status lines give way to rows first.
	lines = statsScreen(demoFrame(testNow, 1), []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, false, 80, 12)
	if len(lines) != 12 || lines[8] != "a" || lines[11] != "d" {
		t.Errorf("with status:\n%s", strings.Join(lines, "\n"))
	}
}

func TestVTWrapsAndMovesLikeXterm(t *testing.T) {
	term := newVT(10, 3)
	fmt.Fprint(term, "0123456789") // fills the row: the wrap is pending
	fmt.Fprint(term, "\x1b[K")     // erases the last column, as xterm does
	fmt.Fprint(term, "\r\nab\x1b[1Acd\x1b[3;2Hx\x1b[?1049hALT\x1b[?1049l")
	want := []string{"01cd45678", "ab", " x"}
	if got := term.lines(); !slices.Equal(got, want) {
		t.Errorf("screen %q, want %q", got, want)
	}
	fmt.Fprint(term, "\x1b[3;1H0123456789abc")
	if got := term.lines(); got[0] != "ab" || got[1] != "0123456789" || got[2] != "abc" || term.wrapCount() != 1 {
		t.Errorf("after a wrap at the bottom: %q, %d wraps", got, term.wrapCount())
	}
	fmt.Fprint(term, "\x1b[5n")
	if len(term.problems()) != 1 {
		t.Errorf("an unknown sequence went unnoticed: %q", term.problems())
	}
}

// TestStatsViewShowsCheckpoints: with --checkpoint-dir, -o wide has a
// CHECKPOINT column saying what each informer's checkpoint did, the plain
// table leaves it out, and the kv and JSON lines carry it.
func TestStatsViewShowsCheckpoints(t *testing.T) {
	f := demoFrame(testNow, 1)
	f.informers[0].ckpt = &ckptSample{loaded: true, objects: 120, age: 3 * time.Minute, writes: 2, bytes: 14 << 10}
	f.informers[1].ckpt = &ckptSample{refused: "other-cluster"}
	f.informers[2].ckpt = &ckptSample{}
	for _, wide := range []bool{true, false} {
		lines := statsScreen(f, nil, wide, 0, 0)
		has := strings.Contains(lines[0], "CHECKPOINT")
		if has != wide {
			t.Fatalf("wide %v: CHECKPOINT column shown %v\n%s", wide, has, strings.Join(lines, "\n"))
		}
		if !wide {
			continue
		}
		for i, want := range []string{"loaded:120,age:3m,written:2,14.0KiB", "refused:other-cluster", "cold", "-"} {
			if !strings.Contains(lines[1+i], want) {
				t.Errorf("row %d: %q, want %q", i, lines[1+i], want)
			}
		}
	}
	if line := formatStatsLine(f.informers[1], f.process); !strings.Contains(line, " checkpoint=refused:other-cluster ") {
		t.Errorf("kv line %q lacks the refusal", line)
	}
	if line := formatStatsLine(statSample{resource: "pods"}, processSample{}); !strings.Contains(line, " checkpoint=- ") {
		t.Errorf("kv line without --checkpoint-dir: %q", line)
	}
	var j struct {
		Checkpoint *checkpointJSON `json:"checkpoint"`
	}
	if err := json.Unmarshal([]byte(formatStatsJSON(testNow, f.informers[0], f.process)), &j); err != nil || j.Checkpoint == nil ||
		!j.Checkpoint.Loaded || j.Checkpoint.LoadedObjects != 120 || j.Checkpoint.Writes != 2 {
		t.Errorf("json: %+v, %v", j.Checkpoint, err)
	}
}

// While an informer syncs, stats shows what get and watch show: count of
// total, the rate and the ETA (in the table and in -o json).
func TestStatsShowsTheSyncsRateAndETA(t *testing.T) {
	s := statSample{name: "pods", resource: "pods", listed: 4000, total: 10000, listRate: 2000, eta: 3 * time.Second, etaKnown: true}
	lines := statsScreen(statsFrame{at: testNow, informers: []statSample{s}}, nil, false, 160, 0)
	if !strings.Contains(lines[1], "4000/10000") || !strings.Contains(lines[1], "syncing, 2000/s, ETA 3s") {
		t.Errorf("row %q, want 4000/10000 and syncing, 2000/s, ETA 3s", lines[1])
	}
	var j map[string]any
	if err := json.Unmarshal([]byte(formatStatsJSON(testNow, s, processSample{})), &j); err != nil {
		t.Fatal(err)
	}
	if j["listedPerSecond"] != 2000.0 || j["total"] != 10000.0 || j["etaSeconds"] != 3.0 {
		t.Errorf("json %v, want listedPerSecond 2000, total 10000, etaSeconds 3", j)
	}
}

// STALLS counts streams given up for going silent, not the streaming
// lists that failed and fell back while a resource type was gone.
func TestStatsStallsColumnCountsSilentStreamsOnly(t *testing.T) {
	s := statSample{name: "gizmos.gone.kinformer.dev", resource: "gizmos.gone.kinformer.dev", fallbacks: 7, errEvents: 14}
	lines := statsScreen(statsFrame{at: testNow, informers: []statSample{s}}, nil, true, 0, 0)
	header, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	i := slices.Index(header, "STALLS")
	if i < 0 || len(row) != len(header) {
		t.Fatalf("header %q, row %q", lines[0], lines[1])
	}
	if row[i] != "0" {
		t.Errorf("STALLS %s for 7 failed streaming lists, want 0", row[i])
	}
}

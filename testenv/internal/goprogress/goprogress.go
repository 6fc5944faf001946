// Package goprogress runs the go command and turns what it prints into progress for a
// person: on a terminal one line, redrawn in place ("compiling: 212 of at most 2,101
// packages, 1m05s"), elsewhere a line every so many packages and a heartbeat while the
// go command is quiet. The package names `go build -v` prints, and "go: downloading"
// notices, are counted, not shown; anything else the go command says is kept for the
// error message if it fails.
//
// It imports the standard library only, so a command built on it compiles in seconds on a
// machine whose build cache is empty, and can show the progress of the long compiles that
// follow (see testenv/cmd/gorun).
package goprogress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Reporting in line mode: a line every linePackages compiled packages and every
// lineDownloads modules downloaded, and a heartbeat after quiet without one (the linker of
// kube-apiserver runs for a while without printing anything).
const (
	linePackages  = 200
	lineDownloads = 50
	quiet         = 20 * time.Second
	// redraw is how often the terminal line is redrawn.
	redraw = 250 * time.Millisecond
	// errorTail is how many lines of the go command's other output an error keeps.
	errorTail = 40
)

// Meter counts what the go command reports and shows it. Create it with New; it is used by
// one goroutine at a time (Run's, or the caller's between runs).
type Meter struct {
	w        io.Writer
	label    string
	terminal bool
	start    time.Time
	now      func() time.Time

	// mu guards the fields below: Run's reader goroutine feeds lines while its ticker
	// redraws.
	mu         sync.Mutex
	total      int      // packages the build depends on, 0 until known
	compiled   int      // package lines seen (`go build -v` prints one per compiled package)
	downloaded int      // "go: downloading" lines seen
	other      []string // the last errorTail other lines
	drawn      bool     // a terminal line is on screen
	reportedAt time.Time
}

// Options configure New.
type Options struct {
	// Label leads every line: "controlplane", "compiling ./cmd/demo".
	Label string
	// Terminal draws one line redrawn in place. Nil means: when w is a terminal.
	Terminal *bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// New returns a meter writing to w, its elapsed time starting now.
func New(w io.Writer, opts Options) *Meter {
	m := &Meter{w: w, label: opts.Label, now: opts.Now}
	if m.now == nil {
		m.now = time.Now
	}
	if opts.Terminal != nil {
		m.terminal = *opts.Terminal
	} else {
		m.terminal = IsTerminal(w)
	}
	m.start = m.now()
	m.reportedAt = m.start
	return m
}

// IsTerminal reports whether w is a terminal (a character device).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// SetTotal sets the number of packages the build may compile, for "of at most N".
func (m *Meter) SetTotal(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total = n
}

// Compiled is the number of packages the go command said it compiled.
func (m *Meter) Compiled() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.compiled
}

// Elapsed is the time since New.
func (m *Meter) Elapsed() time.Duration { return m.now().Sub(m.start) }

// Line takes one line of the go command's standard error.
func (m *Meter) Line(line string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case strings.HasPrefix(line, "go: downloading "):
		m.downloaded++
		if !m.terminal && m.downloaded%lineDownloads == 0 {
			m.printLocked(modules(m.downloaded))
		}
	case IsPackageLine(line):
		m.compiled++
		if !m.terminal && m.compiled%linePackages == 0 {
			m.printLocked(m.countLocked())
		}
	default:
		m.other = append(m.other, line)
		if len(m.other) > errorTail {
			m.other = m.other[1:]
		}
	}
}

// Tick redraws the terminal line, or prints a heartbeat after a quiet spell.
func (m *Meter) Tick() {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.terminal:
		what := m.countLocked()
		if m.compiled == 0 && m.downloaded > 0 {
			what = modules(m.downloaded)
		} else if m.compiled == 0 {
			what = "starting"
		}
		fmt.Fprintf(m.w, "\r%s: %s, %s\x1b[K", m.label, what, m.elapsedLocked())
		m.drawn = true
	case m.now().Sub(m.reportedAt) >= quiet:
		m.printLocked(m.countLocked() + " (working)")
	}
}

// Done ends the progress with a line saying what was done and how long it took
// ("compiled in 3m28s (412 packages)"), replacing the terminal line.
func (m *Meter) Done(what string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clearLocked()
	n := ""
	switch {
	case m.compiled == 1:
		n = " (1 package compiled)"
	case m.compiled > 1:
		n = fmt.Sprintf(" (%d packages compiled)", m.compiled)
	}
	fmt.Fprintf(m.w, "%s: %s in %s%s\n", m.label, what, m.elapsedLocked(), n)
}

// Clear removes the terminal line, if any.
func (m *Meter) Clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clearLocked()
}

func (m *Meter) clearLocked() {
	if m.drawn {
		io.WriteString(m.w, "\r\x1b[K")
		m.drawn = false
	}
}

// Other returns the last lines the go command printed that were neither package names nor
// download notices: its errors, when it fails.
func (m *Meter) Other() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.other...)
}

func (m *Meter) countLocked() string {
	of := ""
	if m.total > 0 {
		of = fmt.Sprintf(" of at most %d", m.total)
	}
	if m.compiled == 1 && of == "" {
		return "1 package compiled"
	}
	return fmt.Sprintf("%d%s packages compiled", m.compiled, of)
}

func (m *Meter) elapsedLocked() string {
	return m.now().Sub(m.start).Round(time.Second).String()
}

func (m *Meter) printLocked(what string) {
	m.clearLocked()
	fmt.Fprintf(m.w, "%s: %s, %s elapsed\n", m.label, what, m.elapsedLocked())
	m.reportedAt = m.now()
}

func modules(n int) string {
	if n == 1 {
		return "1 module downloaded"
	}
	return fmt.Sprintf("%d modules downloaded", n)
}

// StartedEnv is the environment variable that carries the time a person started waiting,
// in Unix seconds or nanoseconds: the Makefile sets it when make starts, gorun when it
// starts if it is not set, and the programs they run report the time since, compiling
// included.
const StartedEnv = "KINFORMER_STARTED"

// Started returns the time in $KINFORMER_STARTED, or else now.
func Started() time.Time {
	if v := os.Getenv(StartedEnv); v != "" {
		var n int64
		if _, err := fmt.Sscan(v, &n); err == nil && n > 0 {
			if n < 1e12 { // seconds (date +%s)
				return time.Unix(n, 0)
			}
			return time.Unix(0, n)
		}
	}
	return time.Now()
}

// IsPackageLine tells the import paths that `go build -v` prints from everything else
// (errors, "# pkg" headers, download notices).
func IsPackageLine(line string) bool {
	return line != "" && !strings.ContainsAny(line, " \t:#")
}

// Run runs cmd, made by exec.CommandContext(ctx, ...) and without Stderr set, feeding each
// line of its standard error to m and ticking m while it runs. The go command runs
// compilers as children: cancelling ctx kills the whole process group. A failure's error
// ends with the go command's last other lines.
func Run(ctx context.Context, cmd *exec.Cmd, m *Meter) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}

	// The reader goroutine owns the pipe; it closes lines at end of file, which comes when
	// the go command and its children have exited. This function drains lines before Wait.
	lines := make(chan string)
	go func(lines chan<- string) {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			lines <- sc.Text()
		}
		// After a read error (only a line over 1 MiB) nothing more is parsed; the go command
		// may still be writing, so drain the rest unread.
		io.Copy(io.Discard, out)
	}(lines)

	period := time.Second
	if m.terminal {
		period = redraw
		m.Tick()
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for lines != nil {
		select {
		case <-tick.C:
			m.Tick()
		case line, ok := <-lines:
			if !ok {
				lines = nil
			} else {
				m.Line(line)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		m.Clear()
		if ctx.Err() != nil {
			return context.Cause(ctx) // The kill was ours; say why.
		}
		return fmt.Errorf("%w\n%s", err, strings.Join(m.Other(), "\n"))
	}
	return nil
}

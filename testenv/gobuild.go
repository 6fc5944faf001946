package testenv

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Progress reporting of goBuild: a line every progressPackages compiled packages, and a
// heartbeat after progressQuiet without one (the linker of kube-apiserver runs for a while
// without printing anything).
const (
	progressPackages = 200
	// progressDownloads: a line every so many modules downloaded (a fresh machine fetches
	// about 450 before compiling starts).
	progressDownloads = 50
	progressQuiet     = 20 * time.Second
	// errorTail is how many lines of the go command's non-package output an error keeps.
	errorTail = 40
)

// goBuild compiles the two commands of the controlplane module in src into outDir, writing
// progress to progress. Cancelling ctx kills the go command and its compilers.
func goBuild(ctx context.Context, goTool, src, outDir string, flags []string, progress io.Writer) error {
	pkgs := []string{"./cmd/etcd", "./cmd/kube-apiserver"}
	p := &buildProgress{w: progress, start: time.Now()}

	// Listing the dependencies first gives the total for the progress lines; on a fresh
	// machine it is also the step that downloads the modules, reported as it goes.
	var list bytes.Buffer
	if err := goStream(ctx, goTool, src, append([]string{"list", "-deps"}, pkgs...), &list, p); err != nil {
		return fmt.Errorf("testenv: listing the control plane's packages failed: %w", err)
	}
	p.total = bytes.Count(list.Bytes(), []byte("\n"))

	args := append([]string{"build", "-v", "-o", outDir + "/"}, flags...)
	if err := goStream(ctx, goTool, src, append(args, pkgs...), io.Discard, p); err != nil {
		return fmt.Errorf("testenv: go build of the control plane failed: %w", err)
	}
	return nil
}

// buildProgress turns the go command's standard error into progress lines. Only the
// goroutine running goStream uses it.
type buildProgress struct {
	w          io.Writer
	start      time.Time
	total      int      // packages the build depends on, 0 until known
	compiled   int      // package lines seen (`go build -v` prints one per compiled package)
	downloaded int      // "go: downloading" lines seen
	other      []string // the last errorTail other lines, for error messages
}

func (p *buildProgress) line(line string) (reported bool) {
	switch {
	case strings.HasPrefix(line, "go: downloading "):
		p.downloaded++
		if p.downloaded%progressDownloads == 0 {
			fmt.Fprintf(p.w, "controlplane: %d modules downloaded, %s elapsed\n", p.downloaded, p.elapsed())
			return true
		}
	case isPackageLine(line):
		p.compiled++
		if p.compiled%progressPackages == 0 {
			p.report("")
			return true
		}
	default:
		p.other = append(p.other, line)
		if len(p.other) > errorTail {
			p.other = p.other[1:]
		}
	}
	return false
}

func (p *buildProgress) report(what string) {
	of := ""
	if p.total > 0 {
		of = fmt.Sprintf(" of at most %d", p.total)
	}
	fmt.Fprintf(p.w, "controlplane: %d%s packages compiled, %s elapsed%s\n", p.compiled, of, p.elapsed(), what)
}

func (p *buildProgress) elapsed() time.Duration { return time.Since(p.start).Round(time.Second) }

// goStream runs the go command with args in src, its standard output to stdout and each line
// of its standard error to p, writing a heartbeat to p while it prints nothing for
// progressQuiet (the linker, for one, runs for a while in silence). Cancelling ctx kills the
// go command and every process it started.
func goStream(ctx context.Context, goTool, src string, args []string, stdout io.Writer, p *buildProgress) error {
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = src
	cmd.Env = buildEnv()
	cmd.Stdout = stdout
	// The go command runs compilers as children: on cancellation kill the whole group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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

	quiet := time.NewTicker(progressQuiet)
	defer quiet.Stop()
	for lines != nil {
		select {
		case <-quiet.C:
			p.report(" (working)")
		case line, ok := <-lines:
			if !ok {
				lines = nil
			} else if p.line(line) {
				quiet.Reset(progressQuiet)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx) // The kill was ours; say why.
		}
		return fmt.Errorf("%w\n%s", err, strings.Join(p.other, "\n"))
	}
	return nil
}

// isPackageLine tells the import paths that `go build -v` prints from everything else (errors,
// "# pkg" headers, download notices).
func isPackageLine(line string) bool {
	return line != "" && !strings.ContainsAny(line, " \t:#")
}

package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// terminateGrace is how long a child gets to exit after SIGTERM before it is killed. The
// apiserver and etcd both shut down in well under a second on loopback; the grace only
// matters when one of them hangs.
const terminateGrace = 15 * time.Second

// process is one running child of the control plane.
//
// The goroutine started by startProcess is the only caller of cmd.Wait; it closes done when
// the child has exited, after storing the result in err. Fields other than done and err never
// change after startProcess returns.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File // closed by the wait goroutine once the child has exited

	done chan struct{} // closed by the wait goroutine when the child has exited
	err  error         // cmd.Wait's result; read only after done is closed
}

// startProcess starts path with args, appending its stdout and stderr to logPath (a header
// line marks each start, so one log can hold several runs of the same server). The child is
// placed in its own process group and, on Linux, is killed by the kernel if the thread that
// started it dies (see setDeathSignal). The caller must end it with terminate.
func startProcess(name, path string, args []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("testenv: open %s log: %w", name, err)
	}
	fmt.Fprintf(logFile, "=== testenv: starting %s at %s\n=== %s %q\n",
		name, time.Now().UTC().Format(time.RFC3339Nano), path, args)

	cmd := exec.Command(path, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("testenv: start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, logFile: logFile, done: make(chan struct{})}
	go p.wait()
	return p, nil
}

// wait reaps the child and publishes its exit status. It is the owner goroutine of cmd.Wait
// and exits as soon as the child does.
func (p *process) wait() {
	p.err = p.cmd.Wait()
	p.logFile.Close()
	close(p.done)
}

// exited reports whether the child has already exited, and with what error.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.exitError()
	default:
		return false, nil
	}
}

// exitError describes how the child ended; only valid after done is closed.
func (p *process) exitError() error {
	if p.err == nil {
		return fmt.Errorf("testenv: %s exited (status 0); log: %s", p.name, p.logPath)
	}
	return fmt.Errorf("testenv: %s exited: %w; log: %s", p.name, p.err, p.logPath)
}

// terminate asks the child to stop with SIGTERM, kills it (and anything left in its process
// group) if it has not exited after terminateGrace, and returns once it has been reaped.
// A child that had already exited on its own is not an error here: terminate is used for
// clean-up, and the exit was reported when it mattered (for example while waiting for
// readiness). terminate may be called more than once.
func (p *process) terminate() error {
	if done, _ := p.exited(); done {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return p.kill()
	}
	grace := time.NewTimer(terminateGrace)
	defer grace.Stop()
	select {
	case <-p.done:
		return nil
	case <-grace.C:
		return p.kill()
	}
}

// kill sends SIGKILL to the child's process group and waits until the child is reaped.
func (p *process) kill() error {
	// A negative pid addresses the whole group created by Setpgid.
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("testenv: kill %s: %w", p.name, err)
		}
	}
	<-p.done
	return nil
}

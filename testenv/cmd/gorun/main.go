// Command gorun is `go run` for people waiting at a terminal: it compiles a package of the
// testenv module with `go build -v`, showing one line that counts the packages compiled
// (where `go run` shows nothing, for minutes on a machine that has never built client-go),
// says how long that took, then runs the program with the remaining arguments, passing on
// its standard streams, signals and exit status. The Makefile runs the control plane and the
// demo through it.
//
//	go run ./cmd/gorun ./cmd/controlplane build
//
// It imports the standard library only (and goprogress, which does too), so it compiles
// itself in seconds. The program it runs finds the time gorun started in
// $KINFORMER_STARTED, to report the whole wait.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/kinformer/kinformer/testenv/internal/goprogress"
)

func main() {
	code, err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gorun:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// run compiles args[0] and runs it with args[1:], returning its exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 {
		return 2, errors.New("usage: gorun PACKAGE [ARGS...]")
	}
	start := time.Now()
	if os.Getenv(goprogress.StartedEnv) == "" {
		os.Setenv(goprogress.StartedEnv, strconv.FormatInt(start.UnixNano(), 10))
	}
	pkg, progArgs := args[0], args[1:]

	// Signals: while compiling, the first one stops the build (the go command runs in a
	// process group of its own, which the terminal's Ctrl-C does not reach); while the
	// program runs, each is passed on to it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	building := make(chan struct{})
	// Ends when the build is over.
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-building:
		}
	}()

	dir, err := os.MkdirTemp("", "kinformer-gorun-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, filepath.Base(pkg))
	m := goprogress.New(stderr, goprogress.Options{Label: "compiling " + pkg})
	build := exec.CommandContext(ctx, "go", "build", "-v", "-o", bin, pkg)
	build.Stdout = stderr
	err = goprogress.Run(ctx, build, m)
	close(building)
	if err != nil {
		return 1, fmt.Errorf("compiling %s: %w", pkg, err)
	}
	m.Done("compiled")

	cmd := exec.Command(bin, progArgs...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		return 1, err
	}
	exited := make(chan error, 1)
	// Ends when the program exits, which this function waits for.
	go func() { exited <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case err := <-exited:
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return exit.ExitCode(), nil
			}
			return 0, err
		}
	}
}

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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// binDir is where the binary of pkg is kept between runs: a directory of the user's cache
// named after the working directory and pkg, where the go command finds the last build
// and, when nothing changed, neither compiles nor links again (linking the demo takes
// longer than everything else a warm run does). Without a cache directory it is a
// temporary directory that cleanup removes.
func binDir(pkg string) (dir string, cleanup func(), err error) {
	wd, err := os.Getwd()
	if err == nil {
		var cache string
		if cache, err = os.UserCacheDir(); err == nil {
			sum := sha256.Sum256([]byte(wd + "\x00" + pkg))
			dir = filepath.Join(cache, "kinformer", "gorun", hex.EncodeToString(sum[:8]))
			if err = os.MkdirAll(dir, 0o755); err == nil {
				return dir, func() {}, nil
			}
		}
	}
	dir, err = os.MkdirTemp("", "kinformer-gorun-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
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

	dir, cleanup, err := binDir(pkg)
	if err != nil {
		return 1, err
	}
	defer cleanup()
	bin := filepath.Join(dir, filepath.Base(pkg))
	_, statErr := os.Stat(bin)
	kept := statErr == nil
	m := goprogress.New(stderr, goprogress.Options{Label: "compiling " + pkg})
	// The dependencies, counted first, are the total the progress shows; on a machine
	// that never built them this is also where the modules are downloaded.
	var deps bytes.Buffer
	list := exec.CommandContext(ctx, "go", "list", "-deps", pkg)
	list.Stdout = &deps
	err = goprogress.Run(ctx, list, m)
	if err == nil {
		m.SetTotal(bytes.Count(deps.Bytes(), []byte("\n")))
		build := exec.CommandContext(ctx, "go", "build", "-v", "-o", bin, pkg)
		build.Stdout = stderr
		err = goprogress.Run(ctx, build, m)
	}
	close(building)
	if err != nil {
		return 1, fmt.Errorf("compiling %s: %w", pkg, err)
	}
	switch {
	case m.Compiled() > 0:
		m.Done("compiled")
	case kept:
		m.Done("up to date") // the go command found the kept binary current
	default:
		m.Done("linked") // every package was in the build cache
	}

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

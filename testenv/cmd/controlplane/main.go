// Command controlplane builds and runs kinformer's local control plane (etcd and
// kube-apiserver on 127.0.0.1) for people and for `make demo`, and causes the faults the
// end-to-end tests cause, by hand.
//
//	go run ./cmd/controlplane build                  # build and cache the binaries, print where
//	go run ./cmd/controlplane assets [-dir DIR]      # a KUBEBUILDER_ASSETS directory for envtest
//	go run ./cmd/controlplane up [-kubeconfig PATH]  # run until Ctrl-C or SIGTERM
//	go run ./cmd/controlplane restart-apiserver [-down 20s]  # in another shell, while up runs
//	go run ./cmd/controlplane stop-apiserver | start-apiserver | compact
//
// Run it from the testenv module directory. `up` prints the kubeconfig path and an export
// line for the shell; with -kubeconfig it also copies the kubeconfig to PATH once the
// apiserver is ready (so a script can wait for that file) and removes the copy on exit.
// Either way, on exit both servers are stopped and their temporary directory is removed.
//
// While `up` runs, the fault commands reach it through a unix socket next to its
// kubeconfig (found through $KUBECONFIG) or at a well-known path in the temporary
// directory; on a terminal, the same faults can be typed into `up` itself (r Enter
// restarts the apiserver, c Enter compacts etcd).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kinformer/kinformer/testenv"
	"github.com/kinformer/kinformer/testenv/internal/goprogress"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "controlplane:", err)
		os.Exit(1)
	}
}

const usage = `usage: controlplane <command> [flags]

commands:
  build              build the etcd and kube-apiserver binaries (cached; fast when up to date)
  assets             write a directory for controller-runtime's envtest (KUBEBUILDER_ASSETS)
  up                 start etcd and kube-apiserver on 127.0.0.1 and run until interrupted

faults, for a running up (from another shell, or typed into up):
  restart-apiserver  stop the apiserver and start it again (-down 20s: stay down that long)
  stop-apiserver     stop the apiserver; etcd and its data stay
  start-apiserver    start it again, same port and credentials
  compact            compact etcd: older resource versions get 410 Gone
`

// run executes one subcommand; it returns when the command is done or ctx is cancelled.
// -h on a subcommand prints its flags and succeeds.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if err := dispatch(ctx, args, stdout, stderr); !errors.Is(err, flag.ErrHelp) {
		return err
	}
	return nil
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command")
	}
	switch args[0] {
	case "build":
		return build(ctx, args[1:], stdout, stderr)
	case "assets":
		return assets(ctx, args[1:], stdout, stderr)
	case "up":
		return up(ctx, args[1:], os.Stdin, stdout, stderr)
	case "restart-apiserver", "stop-apiserver", "start-apiserver", "compact":
		return requestFault(ctx, args[0], args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

func build(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	progress := &wroteTo{w: stderr}
	bins, err := testenv.Build(ctx, testenv.BuildOptions{Progress: progress})
	if err != nil {
		return err
	}
	how := "found in the cache"
	if progress.wrote {
		how = "built now, cached for later runs"
	}
	// The time a person waited: since make (or gorun) started, compiling included.
	fmt.Fprintf(stdout, "etcd:           %s\nkube-apiserver: %s\nready in %s (%s)\n",
		bins.Etcd, bins.APIServer, time.Since(goprogress.Started()).Round(100*time.Millisecond), how)
	return nil
}

// assets writes a directory envtest can take as KUBEBUILDER_ASSETS and prints the export
// line for it.
func assets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("assets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the `directory` to write (default: assets in the build cache)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	path, err := testenv.WriteAssets(ctx, testenv.AssetsOptions{Dir: *dir, Build: testenv.BuildOptions{Progress: stderr}})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "export KUBEBUILDER_ASSETS=%s\n", path)
	return nil
}

// up runs the control plane until ctx is done, serving faults on a control socket and,
// when stdin is a terminal, reading them from stdin.
func up(ctx context.Context, args []string, stdin *os.File, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "also write the kubeconfig to this `path` once ready (removed on exit)")
	noWatchCache := fs.Bool("disable-watch-cache", false, "start the apiserver with --watch-cache=false")
	var apiFlags stringList
	fs.Var(&apiFlags, "apiserver-flag", "extra kube-apiserver `flag` such as --v=2 (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}

	start := time.Now()
	env, err := testenv.Start(ctx, testenv.Options{
		Build:             testenv.BuildOptions{Progress: stderr},
		DisableWatchCache: *noWatchCache,
		APIServerFlags:    apiFlags,
	})
	if err != nil {
		return err
	}
	defer env.Stop()
	if *kubeconfig != "" {
		if err := copyFile(env.KubeconfigPath(), *kubeconfig); err != nil {
			return err
		}
		defer os.Remove(*kubeconfig)
	}
	cfg := env.RESTConfig()
	path := env.KubeconfigPath()
	if *kubeconfig != "" {
		path = *kubeconfig
	}
	fmt.Fprintf(stdout, "control plane ready in %s\n", time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "  kube-apiserver: %s\n  etcd:           %s\n", cfg.Host, env.EtcdURL())
	fmt.Fprintf(stdout, "  logs:           %s\n                  %s\n", env.APIServerLogPath(), env.EtcdLogPath())
	fmt.Fprintf(stdout, "export KUBECONFIG=%s\n", path)

	f := &faultRunner{env: env, log: stdout, now: time.Now}
	sockets := []string{filepath.Join(filepath.Dir(env.KubeconfigPath()), controlSocketName)}
	if *kubeconfig != "" {
		sockets = append(sockets, filepath.Join(filepath.Dir(*kubeconfig), controlSocketName))
	}
	served, stopFaults, err := serveFaults(ctx, f, append(sockets, wellKnownSocket()))
	if err != nil {
		return err
	}
	defer stopFaults()
	fmt.Fprintf(stdout, "  control socket: %s\n", strings.Join(served, "\n                  "))
	if fi, err := stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		fmt.Fprint(stdout, keyHelp())
		// Reads until the terminal closes: a read of a terminal cannot be interrupted, so
		// this goroutine ends with the process, after everything else has stopped.
		go readKeys(ctx, stdin, f, stdout)
	} else {
		fmt.Fprintln(stdout, "faults: go run ./cmd/controlplane restart-apiserver | stop-apiserver | start-apiserver | compact")
	}
	fmt.Fprintln(stdout, "press Ctrl-C to stop")

	<-ctx.Done()
	stopFaults()
	fmt.Fprintln(stdout, "stopping")
	if err := env.Stop(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "stopped")
	return nil
}

// wroteTo is a writer that records whether anything was written through it.
type wroteTo struct {
	w     io.Writer
	wrote bool
}

func (w *wroteTo) Write(p []byte) (int, error) {
	w.wrote = true
	return w.w.Write(p)
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	// Write then rename, so a script waiting for the file never reads half of it.
	tmp := to + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, to)
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// Command controlplane builds and runs kinformer's local control plane (etcd and
// kube-apiserver on 127.0.0.1) for people and for `make demo`.
//
//	go run ./cmd/controlplane build                  # build and cache the binaries, print where
//	go run ./cmd/controlplane up [-kubeconfig PATH]  # run until Ctrl-C or SIGTERM
//
// Run it from the testenv module directory. `up` prints the kubeconfig path and an export
// line for the shell; with -kubeconfig it also copies the kubeconfig to PATH once the
// apiserver is ready (so a script can wait for that file) and removes the copy on exit.
// Either way, on exit both servers are stopped and their temporary directory is removed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kinformer/kinformer/testenv"
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
  build   build the etcd and kube-apiserver binaries (cached; fast when up to date)
  up      start etcd and kube-apiserver on 127.0.0.1 and run until interrupted
`

// run executes one subcommand; it returns when the command is done or ctx is cancelled.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command")
	}
	switch args[0] {
	case "build":
		return build(ctx, args[1:], stdout, stderr)
	case "up":
		return up(ctx, args[1:], stdout, stderr)
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
	start := time.Now()
	bins, err := testenv.Build(ctx, testenv.BuildOptions{Progress: stderr})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "etcd:           %s\nkube-apiserver: %s\n(ready in %s)\n",
		bins.Etcd, bins.APIServer, time.Since(start).Round(time.Millisecond))
	return nil
}

func up(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
	fmt.Fprintln(stdout, "press Ctrl-C to stop")

	<-ctx.Done()
	fmt.Fprintln(stdout, "stopping")
	if err := env.Stop(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "stopped")
	return nil
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

// Command demo is `make demo`: it builds and starts kinformer's local control
// plane (etcd and kube-apiserver on 127.0.0.1, from testenv), starts a
// workload that creates, updates and deletes pods and configmaps in three
// namespaces at a steady rate, and runs `kinformer stats` on them so you can
// watch the caches follow. It runs for $DEMO_SECONDS (default 60) or until
// Ctrl-C, then stops everything it started and removes its temporary
// directories.
//
// Run it from the testenv module directory:
//
//	go run ./cmd/demo            # or: make demo
//	DEMO_SECONDS=10 go run ./cmd/demo
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
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kinformer/kinformer/testenv"
	"github.com/kinformer/kinformer/testenv/internal/goprogress"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// config is what the environment can change.
type config struct {
	seconds      int
	rate         float64
	perNamespace int
	interval     string
}

func loadConfig() (config, error) {
	c := config{seconds: 60, rate: 20, perNamespace: 30, interval: "1s"}
	if v := os.Getenv("DEMO_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return c, fmt.Errorf("DEMO_SECONDS=%q: want a positive number of seconds", v)
		}
		c.seconds = n
	}
	if v := os.Getenv("DEMO_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r <= 0 {
			return c, fmt.Errorf("DEMO_RATE=%q: want a positive number of changes per second", v)
		}
		c.rate = r
	}
	return c, nil
}

func run(ctx context.Context, stdout, stderr io.Writer) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	repo, err := repoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kinformer-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	step(stdout, "1/4 building kinformer (cmd/kinformer)")
	bin := filepath.Join(tmp, "kinformer")
	m := goprogress.New(stderr, goprogress.Options{Label: "    compiling ./cmd/kinformer"})
	build := exec.CommandContext(ctx, "go", "build", "-v", "-o", bin, "./cmd/kinformer")
	build.Dir, build.Stdout = repo, stderr
	if err := goprogress.Run(ctx, build, m); err != nil {
		return fmt.Errorf("building kinformer: %w", err)
	}
	m.Done("compiled")

	step(stdout, "2/4 starting a local control plane (etcd + kube-apiserver)")
	start := time.Now()
	env, err := testenv.Start(ctx, testenv.Options{Build: testenv.BuildOptions{Progress: stderr}})
	if err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	defer env.Stop()
	fmt.Fprintf(stdout, "    control plane ready in %s at %s\n", time.Since(start).Round(time.Millisecond), env.RESTConfig().Host)

	namespaces := []string{"demo-a", "demo-b", "demo-c"}
	step(stdout, "3/4 starting a workload in "+strings.Join(namespaces, ", "))
	fmt.Fprintf(stdout, "    %d pods and %d configmaps in each, then %.0f changes/s (create, update, delete)\n",
		cfg.perNamespace, cfg.perNamespace, cfg.rate)
	w := newWorkload(env.Clientset(), namespaces, cfg.perNamespace, cfg.rate)
	if err := w.setUp(ctx); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	var wg sync.WaitGroup
	defer wg.Wait() // after stopWork
	wg.Go(func() { w.run(workCtx) })

	args := []string{"stats", "pods,configmaps", "-A", "-l", demoLabel, "--interval", cfg.interval, "--kubeconfig", env.KubeconfigPath()}
	step(stdout, "4/4 kinformer "+joinArgs(args[:len(args)-2]))
	fmt.Fprintf(stdout, "    for %ds; Ctrl-C stops it early\n", cfg.seconds)
	stats := exec.Command(bin, args...)
	stats.Stdout, stats.Stderr = stdout, stderr
	if err := stats.Start(); err != nil {
		return fmt.Errorf("starting kinformer: %w", err)
	}
	exited := make(chan error, 1)
	// Owned here: it ends when the kinformer process exits, which the
	// code below always brings about and waits for.
	wg.Go(func() { exited <- stats.Wait() })

	timer := time.NewTimer(time.Duration(cfg.seconds) * time.Second)
	defer timer.Stop()
	var statsErr error
	select {
	case <-timer.C:
		// Let the caches catch up with the last changes, then end kinformer
		// the way a person would, so it prints its final state.
		stopWork()
		time.Sleep(2 * time.Second)
		_ = stats.Process.Signal(os.Interrupt)
		statsErr = waitOrKill(stats, exited)
	case <-ctx.Done():
		// Ctrl-C reached kinformer too (same process group); SIGTERM may
		// not have, so pass it on.
		stopWork()
		_ = stats.Process.Signal(os.Interrupt)
		statsErr = waitOrKill(stats, exited)
	case statsErr = <-exited:
		stopWork()
	}
	wg.Wait()

	summaryCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	pods, cms, err := w.serverCounts(summaryCtx)
	fmt.Fprintf(stdout, "\nworkload: %d creates, %d updates, %d deletes, %d failed\n",
		w.creates.Load(), w.updates.Load(), w.deletes.Load(), w.failures.Load())
	if err == nil {
		fmt.Fprintf(stdout, "server now holds %d pods and %d configmaps labelled %s;\nthe caches above show the same once they have caught up\n", pods, cms, demoLabel)
	}
	step(stdout, "stopping the control plane and removing temporary files")
	if err := env.Stop(); err != nil {
		return err
	}
	if statsErr != nil && ctx.Err() == nil {
		return fmt.Errorf("kinformer stats: %w", statsErr)
	}
	fmt.Fprintf(stdout, "demo: done, %s after it started (compiling included)\n", time.Since(goprogress.Started()).Round(time.Second))
	return nil
}

// waitOrKill waits for the process to exit after an interrupt, killing it
// if it has not within 10 seconds.
func waitOrKill(cmd *exec.Cmd, exited <-chan error) error {
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case err := <-exited:
		return err
	case <-t.C:
		_ = cmd.Process.Kill()
		return errors.Join(errors.New("did not exit after an interrupt; killed"), <-exited)
	}
}

func step(w io.Writer, msg string) {
	fmt.Fprintf(w, "==> %s\n", msg)
}

func joinArgs(args []string) string {
	out := ""
	for i, a := range args {
		if i > 0 {
			out += " "
		}
		out += a
	}
	return out
}

// repoRoot finds the kinformer repository: the parent of the testenv module,
// located from this file's path (go run keeps it) or the working directory.
func repoRoot() (string, error) {
	var candidates []string
	if _, file, _, ok := runtime.Caller(0); ok {
		candidates = append(candidates, filepath.Join(filepath.Dir(file), "..", "..", ".."))
	}
	if wd, err := os.Getwd(); err == nil {
		candidates = append(candidates, filepath.Join(wd, ".."), wd)
	}
	for _, dir := range candidates {
		if _, err := os.Stat(filepath.Join(dir, "cmd", "kinformer", "main.go")); err == nil {
			return filepath.Clean(dir), nil
		}
	}
	return "", errors.New("cannot find the kinformer repository (cmd/kinformer); run the demo from the testenv directory")
}

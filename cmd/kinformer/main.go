// Command kinformer watches, lists and measures any Kubernetes resource
// through kinformer's shared informers. Run `kinformer --help`.
//
// Exit status: 0 on success; 1 on an error, which is printed; 130 or 143
// when SIGINT (Ctrl-C) or SIGTERM ends `get` before its output is complete.
// `watch` and `stats` run until interrupted, so a signal ends them with 0.
// A second signal ends the command at once.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kinformer/kinformer/cmd/kinformer/internal/cli"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { // ends with Execute: done is closed below
		select {
		case s := <-sigs:
			signal.Stop(sigs) // a second signal has its default effect
			cancel(&cli.InterruptedError{Signal: s})
		case <-done:
		}
	}()
	err := cli.Execute(ctx, cli.StdStreams(), os.Args[1:])
	close(done)
	signal.Stop(sigs)
	cancel(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, cli.FormatError(err))
		var ie *cli.InterruptedError
		if errors.As(err, &ie) {
			os.Exit(ie.ExitCode())
		}
		os.Exit(1)
	}
}

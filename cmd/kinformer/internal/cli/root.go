// Package cli implements the kinformer command: cobra wiring in this file,
// and one testable function per command (RunWatch, RunGet, RunStats) that
// writes to the Streams it is given.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// NewCommand returns the kinformer root command, writing to streams.
func NewCommand(streams Streams) *cobra.Command {
	global := &GlobalOptions{}
	root := &cobra.Command{
		Use:   "kinformer",
		Short: "Watch, list and measure Kubernetes resources through kinformer's informers",
		Long: `kinformer runs kinformer's shared informers against a cluster: it lists and
watches any resource the server knows (pods, po, deploy, CRDs...), keeps a local
cache in sync, and prints from it.

The cluster comes from --kubeconfig, $KUBECONFIG or ~/.kube/config, as for kubectl.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f := root.PersistentFlags()
	f.StringVar(&global.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	f.StringVar(&global.Context, "context", "", "the kubeconfig context to use (default: its current context)")
	f.StringVarP(&global.Namespace, "namespace", "n", "", "the namespace to read (default: the context's namespace, or default)")
	f.BoolVarP(&global.AllNamespaces, "all-namespaces", "A", false, "read every namespace")
	f.StringVarP(&global.LabelSelector, "selector", "l", "", "label selector, such as app=web,tier!=db")
	f.StringVar(&global.FieldSelector, "field-selector", "", "field selector, such as status.phase=Running")
	f.StringVar(&global.Shard, "shard", "", "read only a shard of each resource (KEP-5866): uid:I/N, namespace:I/N (N up to 65536) or FIELD:0xSTART-0xEND,... (the server filters when it can, kinformer otherwise). By namespace, FNV-1a keeps similar short names together (ns0 to ns99 all in 0/3): check the spread with: kinformer shards --by namespace --split N")
	f.StringVar(&global.MetricsAddr, "metrics-addr", "", "serve Prometheus /metrics and /debug/pprof/ at HOST:PORT (a bare :PORT listens on 127.0.0.1 only)")
	f.DurationVar(&global.SyncTimeout, "sync-timeout", 0, "give up if the initial sync takes longer than this (default: wait)")

	root.AddCommand(newWatchCommand(streams, global), newGetCommand(streams, global), newStatsCommand(streams, global))
	root.AddCommand(newShardsCommand(streams, global)) // shards.go
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	return root
}

func newWatchCommand(streams Streams, global *GlobalOptions) *cobra.Command {
	opts := WatchOptions{}
	cmd := &cobra.Command{
		Use:   "watch RESOURCE [RESOURCE...]",
		Short: "Print resources, then one line per change (like kubectl get -w)",
		Long: `watch syncs an informer for each resource, with a progress bar, prints the
objects found, then one line per change: the event (ADDED, MODIFIED, DELETED)
and the columns kubectl shows for the resource, as the server renders them (a
custom resource's printer columns included; -o wide adds kubectl's wide ones).

-o json prints one {"type":..., "object":...} per line; -o yaml one document
per event; -o name "EVENT kind/name".`,
		Example: `  kinformer watch pods -A
  kinformer watch deploy,po -n web -o wide
  kinformer watch cm -l app=demo -o json --watch-only`,
		Args: resourceArgs("watch"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkDuration("--duration", opts.Duration); err != nil {
				return err
			}
			return RunWatch(cmd.Context(), streams, global, opts, args)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "output format: name, wide, json or yaml")
	cmd.Flags().BoolVar(&opts.WatchOnly, "watch-only", false, "print changes only, not the objects that exist when the watch starts")
	cmd.Flags().DurationVar(&opts.Duration, "duration", 0, "stop after this long (default: until interrupted)")
	addChunkSize(cmd)
	return cmd
}

func newGetCommand(streams Streams, global *GlobalOptions) *cobra.Command {
	opts := GetOptions{}
	var watch bool // -w
	cmd := &cobra.Command{
		Use:   "get RESOURCE [NAME...]",
		Short: "Sync an informer, then print from its cache",
		Long: `get syncs an informer per resource, with a progress bar, then prints from
its cache: one table per resource, with the columns kubectl shows as the server
renders them (a custom resource's printer columns included; -o wide adds
kubectl's wide ones), or names, JSON or YAML.

Each output reads only what it needs: -o name metadata, a table the server's
table rendering, -o json and -o yaml whole objects. Without --sort-by or
names, -o name, -o json and -o yaml print the list as it arrives, in the
server's order, with no cache.`,
		Example: `  kinformer get pods -A --sort-by .metadata.creationTimestamp
  kinformer get cm -n kube-system -o name
  kinformer get deploy web -o yaml`,
		Args: resourceArgs("get"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if watch {
				// kubectl get -w: the same as kinformer watch.
				if opts.SortBy != "" {
					return &UserError{Message: "get -w prints changes as they come, so it cannot --sort-by; drop one of them"}
				}
				if len(args) > 1 {
					return &UserError{Message: fmt.Sprintf("get -w with names: watch one object with kinformer watch %s --field-selector metadata.name=%s", args[0], args[1])}
				}
				return RunWatch(cmd.Context(), streams, global, WatchOptions{Output: opts.Output}, args)
			}
			opts.ChunkSize, _ = cmd.Flags().GetInt64("chunk-size")
			return RunGet(cmd.Context(), streams, global, opts, args)
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "after printing, print one line per change until interrupted, as kinformer watch does")
	addChunkSize(cmd)
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "output format: name, wide, json, yaml, jsonpath=TEMPLATE or custom-columns=HEADER:PATH,...")
	cmd.Flags().StringSliceVarP(&opts.LabelColumns, "label-columns", "L", nil, "a column per label key given, such as -L app,tier (repeatable)")
	cmd.Flags().BoolVar(&opts.ShowLabels, "show-labels", false, "a last column with each object's labels")
	cmd.Flags().BoolVar(&opts.NoHeaders, "no-headers", false, "print tables without their header line")
	cmd.Flags().StringVar(&opts.SortBy, "sort-by", "", "sort by a field path, such as .metadata.name, {.status.phase} or {.spec.containers[0].image}: numbers and quantities by value, text naturally (web-9 before web-10)")
	return cmd
}

func newStatsCommand(streams Streams, global *GlobalOptions) *cobra.Command {
	opts := StatsOptions{}
	cmd := &cobra.Command{
		Use:   "stats RESOURCE [RESOURCE...]",
		Short: "Show what each informer is doing, refreshed live",
		Long: `stats runs an informer per resource and shows, every --interval: objects
cached, watch events per second by type, the handler's backlog and merged
notifications, the last resource version, the time the initial sync took,
and the heap in use.

On a terminal the view is a table fitted to its width, redrawn in place, with
what goes wrong (the server unreachable, a cache relisting) in a status area
under it; -o wide shows every column. Otherwise, or with -o kv, each refresh
prints one line per informer of space-separated key=value pairs, for scripts,
and what goes wrong goes to standard error, said once:

  time=... resource=pods objects=150 synced=true sync=84ms added/s=2.0 ...

-o json prints one JSON object per informer per refresh instead.

Only metadata is cached unless --full is given.`,
		Example: `  kinformer stats pods,configmaps -A
  kinformer stats deploy -n web --once
  kinformer stats pods -A -o json | jq .objects`,
		Args: resourceArgs("stats"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Interval <= 0 {
				return &UserError{Message: fmt.Sprintf("--interval %s: the refresh period must be positive, such as 1s or 500ms", opts.Interval)}
			}
			if err := checkDuration("--duration", opts.Duration); err != nil {
				return err
			}
			return RunStats(cmd.Context(), streams, global, opts, args)
		},
	}
	cmd.Flags().DurationVar(&opts.Interval, "interval", time.Second, "refresh period")
	cmd.Flags().DurationVar(&opts.Duration, "duration", 0, "stop after this long (default: until interrupted)")
	cmd.Flags().BoolVar(&opts.Once, "once", false, "print one sample after the sync and exit")
	cmd.Flags().BoolVar(&opts.Full, "full", false, "cache whole objects, not only their metadata")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "output format: wide (every column), json or kv (default: a table fitted to the terminal, kv lines when piped)")
	cmd.Flags().DurationVar(&opts.HandlerDelay, "handler-delay", 0, "make the handler take this long per notification, to watch a slow handler's backlog and merges")
	addChunkSize(cmd)
	cmd.Flags().StringVar(&opts.CheckpointDir, "checkpoint-dir", "", "keep each informer's cache in a file in this directory and start from it next time (-o wide shows the CHECKPOINT column)")
	return cmd
}

// checkDuration refuses a negative duration flag (0 means no limit).
func checkDuration(flag string, d time.Duration) error {
	if d < 0 {
		return &UserError{Message: fmt.Sprintf("%s %s: want a positive duration such as 30s, or 0 to run until interrupted", flag, d)}
	}
	return nil
}

// addChunkSize accepts kubectl's --chunk-size, so that command lines
// written for kubectl run: informers list with streaming lists where the
// server has them (one stream, no pages) and in pages of 500 otherwise.
func addChunkSize(cmd *cobra.Command) {
	cmd.Flags().Int64("chunk-size", 500, "the page size of get -o json and -o yaml's lists (0: one response), as in kubectl; informers stream lists where the server can, and page by 500 otherwise")
}

// Execute runs the command line args with ctx, and returns the error to
// print; a *UserError's message is meant for the person as it is.
//
// A ctx that ends (the person pressed Ctrl-C) ends `watch` and `stats`, the
// commands that run until interrupted, without an error. It ends `get`
// with an *InterruptedError when get had not printed everything: a script
// such as `timeout 30 kinformer get pods > f && use f` must not take an
// incomplete file for success. main cancels ctx with an *InterruptedError
// naming the signal as its cause.
func Execute(ctx context.Context, streams Streams, args []string) error {
	cmd := NewCommand(streams)
	cmd.SetArgs(args)
	ran, err := cmd.ExecuteContextC(ctx)
	if err != nil && ctx.Err() != nil {
		// Whatever failed once ctx ended (a request cut short, a sync not
		// finished) failed because of it.
		if ran != nil && ran.Name() == "get" {
			var ie *InterruptedError
			if !errors.As(context.Cause(ctx), &ie) {
				ie = &InterruptedError{}
			}
			return ie
		}
		return nil // interrupted: the normal end of watch and stats
	}
	return err
}

// InterruptedError ends a command interrupted before its output was
// complete. Signal is the signal that interrupted it (nil: its context
// ended otherwise).
type InterruptedError struct {
	Signal os.Signal
}

func (e *InterruptedError) Error() string {
	if e.Signal == nil {
		return "interrupted before the output was complete"
	}
	return fmt.Sprintf("interrupted by %s before the output was complete", signalName(e.Signal))
}

// ExitCode is the exit status a shell gives a process ended by the
// signal: 128 plus its number (130 for SIGINT, 143 for SIGTERM); 1 without
// a signal.
func (e *InterruptedError) ExitCode() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT (Ctrl-C)"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// FormatError is how main prints an error from Execute.
func FormatError(err error) string {
	return fmt.Sprintf("error: %v", err)
}

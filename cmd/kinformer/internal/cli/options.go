package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/shard"
)

// Streams are where a command reads and writes. Out carries the command's
// output (what a script parses); ErrOut carries progress and warnings.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// OutIsTerminal and ErrIsTerminal say whether to draw for a person
	// (progress bars, a redrawn view) or print plain lines for a program.
	OutIsTerminal, ErrIsTerminal bool
	// Width is the terminal's width in columns (0 when unknown).
	Width int
}

// StdStreams returns the process's standard streams, with terminal
// detection.
func StdStreams() Streams {
	s := Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	s.OutIsTerminal = term.IsTerminal(int(os.Stdout.Fd()))
	s.ErrIsTerminal = term.IsTerminal(int(os.Stderr.Fd()))
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
		s.Width = w
	}
	return s
}

// GlobalOptions are the flags every command shares, named as kubectl names
// them.
type GlobalOptions struct {
	Kubeconfig    string
	Context       string
	Namespace     string
	AllNamespaces bool
	LabelSelector string
	FieldSelector string
	// Shard restricts every informer to a shard of its resource, in
	// shard.ParseSet's notation (uid:0/3, namespace:0x…-0x…): sent to the
	// server as a KEP-5866 shard selector, applied on the client when the
	// server ignores it. Empty means every object.
	Shard string
	// MetricsAddr, when set, serves /metrics and /debug/pprof/ there. A
	// missing host means 127.0.0.1.
	MetricsAddr string
	// SyncTimeout bounds the initial sync; 0 means no bound.
	SyncTimeout time.Duration
	// Now is the clock for ages; nil means time.Now.
	Now func() time.Time
}

func (o *GlobalOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// target is one resolved resource and the namespace to read it in ("" for
// every namespace, or a cluster-scoped resource).
type target struct {
	arg string
	// index is the target's position among the command's arguments.
	index     int
	res       kube.Resource
	namespace string
}

// session is what every command needs once the cluster is known.
type session struct {
	cfg     *rest.Config
	targets []target
	// shard is --shard, parsed; zero without it.
	shard shard.Set
}

// connect loads the configuration and resolves args through discovery,
// turning every failure into an error a person can act on.
func (o *GlobalOptions) connect(ctx context.Context, args []string) (*session, error) {
	if err := validateSelectors(o.LabelSelector, o.FieldSelector); err != nil {
		return nil, err
	}
	set, err := shard.ParseSet(o.Shard)
	if err != nil {
		return nil, fmt.Errorf("--shard: %w (for example uid:0/3, the first of three equal ranges of metadata.uid's hash)", err)
	}
	if o.Kubeconfig != "" {
		if _, err := os.Stat(o.Kubeconfig); err != nil {
			return nil, kindError(ErrNoCluster, err, "cannot read the kubeconfig file given by --kubeconfig: %v", err)
		}
	}
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: o.Kubeconfig, Context: o.Context})
	if err != nil {
		if o.Context != "" {
			if cerr := o.noSuchContext(err); cerr != nil {
				return nil, cerr
			}
		}
		return nil, explain(err, "", "")
	}
	ns := o.Namespace
	if ns == "" && !o.AllNamespaces {
		ns = o.defaultNamespace()
	}
	if o.AllNamespaces {
		ns = ""
	}
	s := &session{cfg: cfg, shard: set}
	seen := map[string]bool{}
	for _, arg := range splitArgs(args) {
		res, err := kube.Resolve(ctx, cfg, arg)
		if err != nil {
			return nil, explain(err, cfg.Host, arg)
		}
		key := res.GVR.String()
		if seen[key] {
			continue
		}
		seen[key] = true
		t := target{arg: arg, res: res, index: len(s.targets)}
		if res.Namespaced {
			t.namespace = ns
		}
		s.targets = append(s.targets, t)
	}
	if len(s.targets) == 0 {
		return nil, fmt.Errorf("no resource given: name one or more, for example `pods` or `deploy,cm`")
	}
	return s, nil
}

// noSuchContext is the error of a --context the kubeconfig does not have,
// naming the contexts it has; nil when it has that context.
func (o *GlobalOptions) noSuchContext(err error) error {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
	}
	raw, rerr := rules.Load()
	if rerr != nil {
		return nil
	}
	if _, ok := raw.Contexts[o.Context]; ok {
		return nil
	}
	has := "none"
	if names := slices.Sorted(maps.Keys(raw.Contexts)); len(names) > 0 {
		has = strings.Join(names, ", ")
	}
	msg := fmt.Sprintf("--context %q: the kubeconfig has no such context; it has: %s.", o.Context, has)
	if raw.CurrentContext != "" {
		msg += fmt.Sprintf(" Leave --context out to use its current context, %s.", raw.CurrentContext)
	}
	return kindError(ErrNoCluster, err, "%s", msg)
}

// defaultNamespace is the kubeconfig context's namespace, or "default".
func (o *GlobalOptions) defaultNamespace() string {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	ns, _, err := cc.Namespace()
	if err != nil || ns == "" {
		return "default"
	}
	return ns
}

// splitArgs accepts "pods configmaps" and "pods,configmaps" alike; blank
// names ("pods,,cm", "pods, ") are dropped.
func splitArgs(args []string) []string {
	var out []string
	for _, a := range args {
		for p := range strings.SplitSeq(a, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

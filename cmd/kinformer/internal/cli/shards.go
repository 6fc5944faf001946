package cli

// The shards command: how a resource's objects spread over hash ranges
// (KEP-5866, package shard) and whether the server filters by them, and
// which replica of a group (package shard/replicas) owns which range.
// It is one file and one line in NewCommand.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/spf13/cobra"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shard/replicas"
)

// ShardsOptions are the flags of the shards command.
type ShardsOptions struct {
	// Split cuts the hash space into this many equal ranges. Default 4.
	Split int
	// By is the field hashed: "uid" (default) or "namespace".
	By string
	// Group, when set, shows the Leases of that replica group instead, in
	// the namespace of -n (or every namespace with -A).
	Group string
}

func newShardsCommand(streams Streams, global *GlobalOptions) *cobra.Command {
	opts := ShardsOptions{}
	cmd := &cobra.Command{
		Use:   "shards [RESOURCE...]",
		Short: "Show how objects spread over hash ranges, and who owns which range",
		Long: `shards cuts the hash space of metadata.uid (or namespace) into --split equal
ranges, the shards of KEP-5866, and lists each range of each resource with its
shard selector: how many objects it holds, and whether the server filtered
them (feature gate ShardedListAndWatch) or sent every object for kinformer to
drop (without the gate, each range costs a whole list). A line per resource
then gives the skew: the fullest range's count over the mean (1.00 is even,
N means every object in one of N ranges).

--by namespace keeps each namespace in one range, and KEP-5866 hashes with
FNV-1a, which keeps similar short names close together (ns0 to ns99 all fall
in the first third): look at the skew before sharding by namespace.

--group NAME shows a group of replicas (kinformer's shard/replicas) instead:
each replica's Lease, whether it stands, and the ranges it claims; ranges no
standing Lease claims are named.`,
		Example: `  kinformer shards pods -A --split 3
  kinformer shards cm -A --by namespace --split 3
  kinformer shards --group shardhash -n default`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunShards(cmd.Context(), streams, global, opts, args)
		},
	}
	cmd.Flags().IntVar(&opts.Split, "split", 4, "cut the hash space into this many equal ranges (1 to 1024), and show how the objects spread over them")
	cmd.Flags().StringVar(&opts.By, "by", "uid", "the field hashed: uid or namespace")
	cmd.Flags().StringVar(&opts.Group, "group", "", "show the Leases of this replica group instead")
	return cmd
}

// RunShards is the shards command.
func RunShards(ctx context.Context, streams Streams, global *GlobalOptions, opts ShardsOptions, args []string) error {
	if opts.Group != "" {
		return runShardGroup(ctx, streams, global, opts.Group)
	}
	field := map[string]shard.Field{"uid": shard.UID, "namespace": shard.Namespace}[opts.By]
	if field == "" {
		return &UserError{Message: fmt.Sprintf("--by %q: want uid or namespace", opts.By)}
	}
	if opts.Split < 1 || opts.Split > 1024 {
		return &UserError{Message: fmt.Sprintf("--split %d: want 1 to 1024 ranges", opts.Split)}
	}
	if len(args) == 0 {
		return errNoResource("shards")
	}
	s, err := global.connect(ctx, args)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tRANGE\tSTART\tEND\tOBJECTS\tFILTERED")
	spreads := make([]spread, 0, len(s.targets))
	for _, t := range s.targets {
		sp := spread{resource: resourceName(t), counts: make([]int, 0, opts.Split)}
		for i, r := range shard.Split(opts.Split) {
			set, err := shard.NewSet(field, r)
			if err != nil {
				return err
			}
			n, serverSide, err := countShard(ctx, s, t, global, set)
			if err != nil {
				return explain(err, s.cfg.Host, t.arg)
			}
			by := "by the server"
			if !serverSide {
				by = "by kinformer (the server sent every object)"
			}
			fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%d\t%s\n", sp.resource, i, opts.Split,
				hexStart(r), hexEnd(r), n, by)
			sp.counts = append(sp.counts, n)
		}
		spreads = append(spreads, sp)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(streams.Out)
	skewed := false
	for _, sp := range spreads {
		fmt.Fprintln(streams.Out, sp.String())
		skewed = skewed || sp.skew() >= 1.5
	}
	if skewed && field == shard.Namespace {
		fmt.Fprintln(streams.Out, namespaceSkewHint)
	}
	return nil
}

// namespaceSkewHint explains a skewed split by namespace.
const namespaceSkewHint = `By namespace, every object of a namespace is in one range, and KEP-5866
hashes names with FNV-1a, which keeps similar short names close together
(ns0 to ns99 all fall in the first third): a few ranges can hold most of
the objects. Shard by uid for an even spread.`

// spread is how one resource's objects fall into the ranges of a split.
type spread struct {
	resource string
	counts   []int // per range, in order
}

// skew is the fullest range's count over the mean: 1 is an even spread,
// len(counts) all objects in one range; 0 with no objects.
func (sp spread) skew() float64 {
	total, most := 0, 0
	for _, n := range sp.counts {
		total += n
		most = max(most, n)
	}
	if total == 0 {
		return 0
	}
	return float64(most) * float64(len(sp.counts)) / float64(total)
}

// String is the spread's summary line: the objects, the fullest range,
// the mean, and the skew (max/mean).
func (sp spread) String() string {
	total, most, at := 0, 0, 0
	for i, n := range sp.counts {
		total += n
		if n > most {
			most, at = n, i
		}
	}
	if total == 0 {
		return fmt.Sprintf("%s: no objects over %d ranges", sp.resource, len(sp.counts))
	}
	mean := float64(total) / float64(len(sp.counts))
	return fmt.Sprintf("%s: %d objects over %d ranges; fullest %d/%d with %d, mean %.1f, skew (max/mean) %.2f",
		sp.resource, total, len(sp.counts), at, len(sp.counts), most, mean, sp.skew())
}

func hexStart(r shard.Range) string { s, _, _ := strings.Cut(r.String(), "-"); return s }
func hexEnd(r shard.Range) string   { _, e, _ := strings.Cut(r.String(), "-"); return e }

// serverSideGauge records a source's metrics.ShardMetrics.ServerSide.
type serverSideGauge struct{ v atomic.Int64 }

func (g *serverSideGauge) Set(v float64) { g.v.Store(int64(v)) }

// countShard lists t's objects in set, metadata only, and says whether the
// server filtered them.
func countShard(ctx context.Context, s *session, t target, global *GlobalOptions, set shard.Set) (int, bool, error) {
	var mode serverSideGauge
	src, err := kube.Source[*metav1.PartialObjectMetadata](ctx, s.cfg, kube.SourceOptions{
		Resource:     t.res,
		Selection:    kube.Selection{Namespace: t.namespace, LabelSelector: global.LabelSelector, FieldSelector: global.FieldSelector, Shard: set},
		ShardMetrics: metrics.ShardMetrics{ServerSide: &mode},
	})
	if err != nil {
		return 0, false, err
	}
	res, err := listwatch.ListAll(ctx, src, listwatch.Options{}, 500)
	if err != nil {
		return 0, false, err
	}
	return len(res.Items), mode.v.Load() == 1, nil
}

// runShardGroup prints the Leases of group.
func runShardGroup(ctx context.Context, streams Streams, global *GlobalOptions, group string) error {
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: global.Kubeconfig, Context: global.Context})
	if err != nil {
		return explain(err, "", "")
	}
	client, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := global.Namespace
	if ns == "" && !global.AllNamespaces {
		ns = global.defaultNamespace()
	}
	if global.AllNamespaces {
		ns = ""
	}
	list, err := client.Leases(ns).List(ctx, metav1.ListOptions{LabelSelector: replicas.GroupLabel + "=" + group})
	if err != nil {
		return explain(err, cfg.Host, "leases")
	}
	return printShardGroup(streams.Out, group, list.Items, global.now())
}

// printShardGroup writes one line per Lease of the group, then the ranges
// that no standing Lease claims.
func printShardGroup(w io.Writer, group string, leases []coordinationv1.Lease, now time.Time) error {
	if len(leases) == 0 {
		fmt.Fprintf(w, "No Lease of group %q found (label %s=%s).\n", group, replicas.GroupLabel, group)
		return nil
	}
	slices.SortFunc(leases, func(a, b coordinationv1.Lease) int { return strings.Compare(a.Name, b.Name) })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPLICA\tLEASE\tRENEWED\tSTANDS\tLEAVING\tRANGES")
	slots := 0
	claimed := map[int]bool{}
	for _, l := range leases {
		holder, renewed, stands := "<none>", "never", false
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		if l.Spec.RenewTime != nil && l.Spec.LeaseDurationSeconds != nil {
			age := now.Sub(l.Spec.RenewTime.Time)
			renewed = age.Round(100*time.Millisecond).String() + " ago"
			stands = age < time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
		}
		// The slot count is the cluster's text: beyond shard.MaxSplit no
		// replica could have written it (NewGroup refuses it), and it must
		// not size the list of unclaimed ranges below.
		n, _ := strconv.Atoi(l.Annotations[replicas.SlotsAnnotation])
		valid := n > 0 && n <= shard.MaxSplit
		if valid {
			slots = max(slots, n)
		}
		ranges := l.Annotations[replicas.RangesAnnotation]
		if stands {
			for part := range strings.SplitSeq(ranges, ",") {
				if i, err := strconv.Atoi(part); err == nil {
					claimed[i] = true
				}
			}
		}
		if ranges == "" {
			ranges = "-"
		}
		switch {
		case valid:
			ranges += fmt.Sprintf(" (of %d)", n)
		case n > 0:
			ranges += fmt.Sprintf(" (of %d: invalid)", n)
		}
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%v\t%v\t%s\n", holder, l.Namespace, l.Name, renewed, stands,
			l.Annotations[replicas.LeavingAnnotation] == "true", ranges)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var missing []string
	for i := range slots {
		if !claimed[i] {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(w, "Ranges no standing Lease claims: %s\n", strings.Join(missing, ","))
	}
	return nil
}

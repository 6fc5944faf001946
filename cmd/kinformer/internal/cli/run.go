package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/checkpoint"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/clusterid"
	"github.com/kinformer/kinformer/internal/listquery"
	"github.com/kinformer/kinformer/internal/serverprobe"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/reflector"
)

// newSourceFunc is kube.Source of *unstructured.Unstructured or
// *metav1.PartialObjectMetadata, or the table source's: the resource is
// opts.Resource.
type newSourceFunc[T cache.Object] func(ctx context.Context, cfg *rest.Config, opts kube.SourceOptions) (listwatch.ListerWatcher[T], error)

// live is one running informer of a command.
type live[T labeled] struct {
	target   target
	name     string
	inf      *informer.Shared[T]
	reg      *informer.Registration
	counters *informerCounters
	// started is when the informer was built (just before it runs).
	started time.Time
	// syncedIn is the time the initial sync took, in nanoseconds; 0 until
	// the handler has processed the initial list.
	syncedIn atomic.Int64
	// fatal receives the first error that retrying will not fix, seen
	// before the sync; capacity 1, never closed.
	fatal chan error
	// sel is what the informer lists.
	sel kube.Selection
	// total is how many objects the server said the initial list holds
	// (countObjects), or -1 until it has said.
	total atomic.Int64
}

// count asks the server how many objects the initial list holds, for the
// progress; it leaves total at -1 when the server does not say.
func (l *live[T]) count(ctx context.Context, cfg *rest.Config, sel kube.Selection) {
	if n, ok := countObjects(ctx, cfg, l.target, sel); ok {
		l.total.Store(n)
	}
}

// progress is the informer's Progress, with the counted total as Expected
// while the list itself does not say how many objects it holds.
func (l *live[T]) progress() reflector.Progress {
	p := l.inf.Progress()
	if p.Expected < 0 && !p.Relist {
		if n := l.total.Load(); n >= 0 {
			p.Expected = n
		}
	}
	return p
}

func (l *live[T]) synced() bool { return l.reg.HasSynced() }

// syncTime is how long the initial sync took, or 0 before it is done.
func (l *live[T]) syncTime() time.Duration {
	if d := l.syncedIn.Load(); d > 0 {
		return time.Duration(d)
	}
	if l.synced() {
		return time.Since(l.started) // the run goroutine has not recorded it yet
	}
	return 0
}

// group runs the informers of one command. Run it with run; it owns every
// goroutine it starts and run returns once they have all exited.
type group[T labeled] struct {
	informers []*live[T]
	// health follows the informers' failures and recoveries; its run
	// goroutine prints them to groupOptions.warnings unless a view holds
	// the screen.
	health *health
	// server is what the informers share about the server: when one of
	// them, or a probe of /readyz, finds it back after an outage, all try
	// again within a second (see reflector.Server).
	server *reflector.Server
	// cfg is the cluster's configuration, for counting each resource.
	cfg *rest.Config
}

// groupOptions configure newGroup.
type groupOptions[T labeled] struct {
	session   *session
	global    *GlobalOptions
	newSource newSourceFunc[T]
	collector *collector
	// handler returns the handler for one target; nil means a no-op.
	handler func(target) informer.Handler[T]
	// warnings receive what goes wrong after the sync (and what retrying
	// may fix before it), in a few lines (see health).
	warnings io.Writer
	// ctxErr tells the error handler the command is ending.
	ctxErr func() error
	// checkpointDir, when set, keeps each informer's cache there between
	// runs (--checkpoint-dir).
	checkpointDir string
}

func newGroup[T labeled](ctx context.Context, opts groupOptions[T]) (*group[T], error) {
	// What goes wrong reaches people through health, which hears of the
	// informers' successes and back-off delays from the collector.
	g := &group[T]{health: newHealth(opts.session.cfg.Host, opts.warnings, nil),
		server: serverprobe.New(opts.session.cfg, nil), cfg: opts.session.cfg}
	opts.collector.health = g.health
	var cluster *clusterid.Reader
	if opts.checkpointDir != "" {
		cluster = clusterid.New(opts.session.cfg, nil, listquery.MapError)
	}
	for _, t := range opts.session.targets {
		l := &live[T]{target: t, name: informerName(t), fatal: make(chan error, 1), started: time.Now()}
		l.counters = opts.collector.counters(l.name)
		so := kube.SourceOptions{Resource: t.res, Selection: kube.Selection{Namespace: t.namespace,
			LabelSelector: opts.global.LabelSelector, FieldSelector: opts.global.FieldSelector,
			Shard: opts.session.shard}}
		l.sel = so.Selection
		l.total.Store(-1)
		if !so.Shard.IsZero() {
			so.ShardMetrics = opts.collector.shardMetrics(l.name)
		}
		src, err := opts.newSource(ctx, opts.session.cfg, so)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.arg, err)
		}
		var ckpt informer.CheckpointOptions[T]
		if cluster != nil {
			ckpt = checkpointOptions[T](opts.checkpointDir, t, so.Selection, cluster)
			l.counters.ckpt.on.Store(true)
		}
		inf, err := informer.NewShared(informer.Options[T]{
			Name:       l.name,
			Source:     src,
			Transform:  informer.DropManagedFields[T],
			Metrics:    opts.collector,
			Checkpoint: ckpt,
			Settings:   reflector.Settings{Server: g.server},
			ErrorHandler: func(err error) {
				if opts.ctxErr() != nil {
					return
				}
				if errors.Is(err, reflector.ErrInitialEventsTimeout) || errors.Is(err, reflector.ErrWatchStalled) {
					l.counters.stalls.Inc()
				}
				if !l.synced() && fatalBeforeSync(err) {
					select {
					case l.fatal <- err:
					default:
					}
					return
				}
				g.health.failure(l.name, err)
			},
		})
		if err != nil {
			return nil, err
		}
		var h informer.Handler[T] = informer.HandlerFuncs[T]{}
		if opts.handler != nil {
			h = opts.handler(t)
		}
		reg, err := inf.AddHandler(h, informer.HandlerOptions{Name: "kinformer-cli"})
		if err != nil {
			return nil, err
		}
		l.inf, l.reg = inf, reg
		g.informers = append(g.informers, l)
	}
	return g, nil
}

// checkpointOptions keep the cache of t's informer in dir: a file per
// resource, selection and object type (metadata or full objects).
func checkpointOptions[T labeled](dir string, t target, sel kube.Selection, cluster *clusterid.Reader) informer.CheckpointOptions[T] {
	id := checkpoint.Identity{Resource: "kinformer " + t.res.GVR.String() + " " + sel.String(), Type: checkpoint.TypeName[T]()}
	return informer.CheckpointOptions[T]{Path: checkpoint.Path(dir, id), Identity: id, Cluster: cluster.Get}
}

// informerName names a target's informer in metrics and messages: the
// resource, qualified by group, and the namespace when there is one.
func informerName(t target) string {
	n := resourceName(t)
	if t.namespace != "" {
		n += " -n " + t.namespace
	}
	return n
}

// run runs every informer until ctx is done, and returns once all their
// goroutines (and the sync timers started here) have exited.
func (g *group[T]) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { g.health.run(ctx) })
	wg.Go(func() { g.server.Run(ctx) })
	for _, l := range g.informers {
		wg.Go(func() { _ = l.inf.Run(ctx) })
		if l.sel.Shard.IsZero() { // a count of the whole resource, not of the shard
			wg.Go(func() { l.count(ctx, g.cfg, l.sel) })
		}
		wg.Go(func() {
			select {
			case <-l.reg.Synced():
				l.syncedIn.Store(int64(max(time.Since(l.started), time.Nanosecond)))
			case <-ctx.Done():
			}
		})
	}
	wg.Wait()
}

// errSyncTimeout is wrapped by waitSynced's error when --sync-timeout ran
// out.
var errSyncTimeout = errors.New("initial sync timed out")

// waitSynced waits until every informer's handler has processed its
// initial list, or one hits an error retrying will not fix, or ctx is
// done, or timeout (when positive) passes.
func (g *group[T]) waitSynced(ctx context.Context, timeout time.Duration, host string) error {
	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	for _, l := range g.informers {
		select {
		case <-l.reg.Synced():
		case err := <-l.fatal:
			return explain(err, host, l.target.arg)
		case <-ctx.Done():
			return ctx.Err()
		case <-expire:
			return fmt.Errorf("%s: %w after %s (is the server slow, or the list very large? raise --sync-timeout)", l.name, errSyncTimeout, timeout)
		}
	}
	return nil
}

// labeled is the object constraint of the CLI's informers.
type labeled = informer.Labeled

// resourceName is the target's plural resource, qualified by its group.
func resourceName(t target) string {
	if t.res.GVR.Group != "" {
		return t.res.GVR.Resource + "." + t.res.GVR.Group
	}
	return t.res.GVR.Resource
}

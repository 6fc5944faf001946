package controllerruntime

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kinformer/kinformer/checkpoint"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/clusterid"
	"github.com/kinformer/kinformer/internal/listquery"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	kprom "github.com/kinformer/kinformer/metrics/prometheus"
)

// Options are kinformer's opt-ins for a manager's cache, beside
// controller-runtime's own cache.Options (which keep their meaning).
// NewCache takes them:
//
//	mgr, err := manager.New(cfg, manager.Options{
//		NewCache: controllerruntime.NewCache(controllerruntime.Options{
//			Checkpoints: controllerruntime.Checkpoints{Dir: "/var/cache/my-operator"},
//			Metrics:     metrics.Registry, // sigs.k8s.io/controller-runtime/pkg/metrics
//		}),
//	})
//
// The zero Options are New's behaviour.
type Options struct {
	// Checkpoints, when Dir is set, save each informer's cache to a file
	// and start the next run of the manager from it (a warm restart).
	Checkpoints Checkpoints
	// Metrics, when set, receives the measurements of every informer of
	// the cache (reflector, informer and checkpoint metrics of package
	// metrics/prometheus, under the namespace "kinformer") and the sync
	// progress of each (kinformer_cache_*): give it controller-runtime's
	// metrics.Registry, and the manager's metrics endpoint serves them.
	Metrics prometheus.Registerer
	// Shards share the objects of the types they list between the
	// replicas of a manager, through Leases: each replica caches, and its
	// controllers reconcile, only its share (see Shard and the package doc).
	// A type not listed is cached whole.
	Shards map[client.Object]Shard
}

// Checkpoints configure the warm restarts of a cache (see
// informer.CheckpointOptions for what a checkpoint does and why what it
// serves is safe, and kube.Checkpoints for the trust rules, which are the
// same here: a file names the cluster by the uid of its kube-system
// namespace, and one of another cluster, kind, selection or Go type is
// refused and the informer starts cold).
//
// Which informers have one: those of built-in Go types (protobuf files,
// read back through the typed source's decoder, strings interned as a list
// would) and of views (JSON files). Unstructured, metadata-only and custom
// resources' Go types are not checkpointed.
type Checkpoints struct {
	// Dir is the directory of the files, created (mode 0700) when missing;
	// one file per informer, named after its kind, namespace and
	// selectors. Empty: no checkpoints. Use one directory per cluster.
	Dir string
	// Interval and Changes say how often a changed cache is written
	// (informer.CheckpointOptions); zero values take the defaults.
	Interval time.Duration
	Changes  int
	// AllowSecrets lets the informer of Secrets have a checkpoint: it
	// writes their data to the disk, outside the apiserver's encryption
	// at rest. Without it, Secrets are not checkpointed.
	AllowSecrets bool
}

// NewCache returns a cache.NewCacheFunc, for manager.Options.NewCache,
// making New's cache with kinformer's opt-ins o.
func NewCache(o Options) crcache.NewCacheFunc {
	return func(cfg *rest.Config, opts crcache.Options) (crcache.Cache, error) {
		ext, err := newExtensions(o)
		if err != nil {
			return nil, err
		}
		return newCache(cfg, opts, ext)
	}
}

// cacheOptions are controller-runtime's cache options with the opt-ins.
type cacheOptions struct {
	crcache.Options
	ext *extensions // nil: none
}

// extensions are the opt-ins of one cache, shared by its informers.
type extensions struct {
	opts     Options
	provider metrics.Provider // nil: no metrics
	progress *progressCollector

	clusterOnce sync.Once
	cluster     *clusterid.Reader

	// shards are the sharded informers' settings, by informer; set by
	// resolveShards, then read-only.
	shards map[entryKey]*shardSpec
}

// providers holds one kinformer metrics provider per registerer: its
// collectors can be registered once, and several caches (managers) in a
// process share them, each informer's series under its name.
var providers struct {
	sync.Mutex
	byReg map[prometheus.Registerer]*providerAndProgress
}

type providerAndProgress struct {
	provider *kprom.Provider
	progress *progressCollector
}

func newExtensions(o Options) (*extensions, error) {
	x := &extensions{opts: o}
	if o.Metrics != nil {
		providers.Lock()
		defer providers.Unlock()
		pp, ok := providers.byReg[o.Metrics]
		if !ok {
			p, err := kprom.NewProvider(kprom.Options{Registerer: o.Metrics, Namespace: "kinformer"})
			if err != nil {
				return nil, fmt.Errorf("controllerruntime.NewCache: metrics: %w", err)
			}
			pc := newProgressCollector()
			if err := o.Metrics.Register(pc); err != nil {
				return nil, fmt.Errorf("controllerruntime.NewCache: metrics: %w", err)
			}
			pp = &providerAndProgress{provider: p, progress: pc}
			if providers.byReg == nil {
				providers.byReg = map[prometheus.Registerer]*providerAndProgress{}
			}
			providers.byReg[o.Metrics] = pp
		}
		x.provider, x.progress = pp.provider, pp.progress
	}
	return x, nil
}

// clusterReader returns the reader of the cluster's identity, made once
// from the first informer's config and client.
func (x *extensions) clusterReader(cfg entryConfig) *clusterid.Reader {
	x.clusterOnce.Do(func() { x.cluster = clusterid.New(cfg.restConfig, cfg.httpClient, listquery.MapError) })
	return x.cluster
}

// extendInformer adds the cache's opt-ins to the options of the informer
// of cfg, whose objects src lists and watches.
func extendInformer[T client.Object](cfg entryConfig, src listwatch.ListerWatcher[T], io *informer.Options[T]) error {
	x := cfg.ext
	if x == nil {
		return nil
	}
	if x.provider != nil {
		io.Metrics = x.provider
	}
	if x.opts.Checkpoints.Dir == "" || !checkpointable[T](cfg) {
		return nil
	}
	c := x.opts.Checkpoints
	codec, err := checkpoint.DefaultCodec[T]()
	if err != nil {
		return fmt.Errorf("checkpoint of %s: %w", cfg.gvk, err)
	}
	if p, ok := src.(interface {
		ProtoDecoder() func([]byte) (T, error)
	}); ok && codec.Name == "protobuf" {
		if dec := p.ProtoDecoder(); dec != nil {
			codec.Decode = dec
		}
	}
	id := checkpoint.Identity{Resource: checkpointResource(cfg), Type: checkpoint.TypeName[T](), Encoding: codec.Name}
	io.Checkpoint = informer.CheckpointOptions[T]{
		Path:     checkpoint.Path(c.Dir, id),
		Identity: id,
		Cluster:  x.clusterReader(cfg).Get,
		Codec:    codec,
		Interval: c.Interval,
		Changes:  c.Changes,
	}
	return nil
}

// checkpointable says whether the informer of cfg, of objects T, has a
// checkpoint: built-in Go types and views, Secrets only when allowed.
func checkpointable[T client.Object](cfg entryConfig) bool {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer {
		return false // converted custom resources (client.Object)
	}
	switch any(*new(T)).(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		return false
	}
	if cfg.gvk.Group == "" && cfg.gvk.Kind == "Secret" && !cfg.ext.opts.Checkpoints.AllowSecrets {
		return false
	}
	_, builtin := builtinEntries[cfg.gvk]
	_, view := viewFor(cfg.gvk)
	return builtin || view
}

// checkpointResource names what an informer caches in its checkpoint's
// identity: kind, namespace and selectors.
func checkpointResource(cfg entryConfig) string {
	s := cfg.gvk.String()
	if cfg.namespace != "" {
		s += " -n " + cfg.namespace
	}
	if cfg.label != "" {
		s += " " + cfg.label
	}
	if cfg.field != "" {
		s += " --field-selector " + cfg.field
	}
	return s
}

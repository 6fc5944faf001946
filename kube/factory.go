package kube

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
)

// FactoryOptions configures NewFactory. The zero value watches every
// namespace, without resync, tweaks or transforms.
type FactoryOptions struct {
	// Informer configures every informer of the factory: default
	// namespace, resync, list-option tweaks, transform, error handler,
	// clock, metrics and mutation detector.
	Informer informer.FactoryOptions
	// HTTPClient carries every request of every source (it must come from
	// rest.HTTPClientFor of the same config). nil: NewFactory makes one.
	HTTPClient *http.Client
}

// SourceKind says how an informer's objects come from the server.
type SourceKind string

const (
	SourceTyped    SourceKind = "typed"    // Typed: a built-in Go type
	SourceDynamic  SourceKind = "dynamic"  // Dynamic: *unstructured.Unstructured
	SourceMetadata SourceKind = "metadata" // Metadata: *metav1.PartialObjectMetadata
)

// InformerKey identifies one informer of a Factory: the resource, how it is
// served, and the informer package's key (Go type, namespace, selectors).
type InformerKey struct {
	Kind     SourceKind
	Resource schema.GroupVersionResource
	informer.InformerKey
}

func (k InformerKey) String() string {
	return fmt.Sprintf("%s %s (%s)", k.Kind, k.Resource.String(), k.InformerKey.String())
}

// group is the informer.Factory holding the informers of one source kind
// and resource. Typed informers share one group: informer.Factory keys
// them by Go type, which tells their resources apart. Dynamic and metadata
// informers of different resources share a Go type, so each resource has
// its own group.
type group struct {
	kind     SourceKind
	resource schema.GroupVersionResource // empty for SourceTyped
}

// Factory hands out shared informers for a kube-apiserver, the generic
// equivalent of client-go's generated factory: where client-go writes
// factory.Core().V1().Pods(), kinformer writes
//
//	pods, err := kube.Informer[*corev1.Pod](f, informer.InformerOptions[*corev1.Pod]{})
//
// with no code generation. There is one informer per (resource, source
// kind, namespace, selectors) per factory, whoever asks for it; only the
// first request configures it (see informer.InformerFor).
//
// Every source of a factory shares one HTTP client (so one connection pool)
// and one client-side rate limiter, built from the config's QPS and Burst
// (DefaultQPS and DefaultBurst when both are zero; none when QPS is
// negative). Watches are not rate limited.
//
// The factory owns the goroutines of the informers it started: Shutdown
// stops them, waits for them, and closes the client's idle connections. A
// Factory is safe for concurrent use. Create it with NewFactory.
type Factory struct {
	// Set by NewFactory, then read-only.
	cfg        *rest.Config // carries the shared RateLimiter
	httpClient *http.Client
	opts       informer.FactoryOptions

	// mu guards the fields below. It is never held while calling an
	// informer.Factory's Start, WaitForCacheSync or Shutdown.
	mu     sync.Mutex
	groups map[group]*informer.Factory
	// shutdown is set by Shutdown; groups made later are shut down at once.
	shutdown bool
}

// NewFactory returns a factory of informers for the server cfg points at.
// cfg is copied, not kept. It fails only when no HTTP client can be built
// from cfg (bad TLS files, say).
func NewFactory(cfg *rest.Config, opts FactoryOptions) (*Factory, error) {
	if cfg == nil {
		return nil, fmt.Errorf("kube: NewFactory: nil rest.Config")
	}
	c := rest.CopyConfig(cfg)
	if c.QPS == 0 && c.Burst == 0 {
		c.QPS, c.Burst = DefaultQPS, DefaultBurst
	}
	if c.RateLimiter == nil && c.QPS > 0 {
		c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(c.QPS, c.Burst)
	}
	hc := opts.HTTPClient
	if hc == nil {
		var err error
		if hc, err = rest.HTTPClientFor(c); err != nil {
			return nil, fmt.Errorf("kube: NewFactory: HTTP client: %w", err)
		}
	}
	return &Factory{cfg: c, httpClient: hc, opts: opts.Informer, groups: make(map[group]*informer.Factory)}, nil
}

// groupFor returns the informer.Factory of g, creating it on first use.
func (f *Factory) groupFor(g group) *informer.Factory {
	f.mu.Lock()
	defer f.mu.Unlock()
	inf, ok := f.groups[g]
	if !ok {
		inf = informer.NewFactory(f.opts)
		if f.shutdown {
			inf.Shutdown() // later Starts do nothing, as for the other groups
		}
		f.groups[g] = inf
	}
	return inf
}

func (f *Factory) sourceOptions(namespace string) SourceOptions {
	return SourceOptions{Namespace: namespace, HTTPClient: f.httpClient}
}

// Informer returns the factory's informer for the built-in resource served
// as Go type T (for example *corev1.Pod), in the namespace and with the
// selectors opts gives, creating it on first use. A namespace is ignored
// for a cluster-scoped T. An informer created after Start runs from the
// next Start. A T that is not a built-in resource is an error naming it.
func Informer[T cache.Object](f *Factory, opts informer.InformerOptions[T]) (*informer.SharedIndexInformer[T], error) {
	if _, err := ResourceFor[T](); err != nil {
		return nil, err
	}
	return informer.InformerFor(f.groupFor(group{kind: SourceTyped}), opts, func(ns string) (listwatch.ListerWatcher[T], error) {
		return Typed[T](f.cfg, f.sourceOptions(ns))
	})
}

// Lister returns a lister over the cache of Informer[T](f, opts). It reads
// what the informer has cached, so it is empty until the factory is
// started and the informer synced (see Factory.WaitForCacheSync).
func Lister[T informer.Labeled](f *Factory, opts informer.InformerOptions[T]) (informer.Lister[T], error) {
	inf, err := Informer(f, opts)
	if err != nil {
		return informer.Lister[T]{}, err
	}
	return informer.NewLister(inf.GetIndexer()), nil
}

// DynamicInformer returns the factory's informer for any resource (custom
// resources included) as *unstructured.Unstructured, typically a Resource
// from Resolve. res.Namespaced says whether a namespace applies.
func DynamicInformer(f *Factory, res Resource, opts informer.InformerOptions[*unstructured.Unstructured]) (*informer.SharedIndexInformer[*unstructured.Unstructured], error) {
	return informer.InformerFor(f.groupFor(group{kind: SourceDynamic, resource: res.GVR}), opts,
		func(ns string) (listwatch.ListerWatcher[*unstructured.Unstructured], error) {
			if !res.Namespaced {
				ns = ""
			}
			return Dynamic(f.cfg, res.GVR, f.sourceOptions(ns))
		})
}

// MetadataInformer returns the factory's informer for any resource reduced
// to its metadata (see Metadata). res.Namespaced says whether a namespace
// applies.
func MetadataInformer(f *Factory, res Resource, opts informer.InformerOptions[*metav1.PartialObjectMetadata]) (*informer.SharedIndexInformer[*metav1.PartialObjectMetadata], error) {
	return informer.InformerFor(f.groupFor(group{kind: SourceMetadata, resource: res.GVR}), opts,
		func(ns string) (listwatch.ListerWatcher[*metav1.PartialObjectMetadata], error) {
			if !res.Namespaced {
				ns = ""
			}
			return Metadata(f.cfg, res.GVR, f.sourceOptions(ns))
		})
}

// Start starts every informer not started yet, each running until ctx is
// done or Shutdown. It does not block, and does nothing after Shutdown.
func (f *Factory) Start(ctx context.Context) {
	for _, inf := range f.snapshot() {
		inf.Start(ctx)
	}
}

// snapshot returns the groups at this moment.
func (f *Factory) snapshot() map[group]*informer.Factory {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[group]*informer.Factory, len(f.groups))
	for g, inf := range f.groups {
		out[g] = inf
	}
	return out
}

// WaitForCacheSync waits until every started informer has synced, or ctx is
// done, and reports for each whether it synced.
func (f *Factory) WaitForCacheSync(ctx context.Context) map[InformerKey]bool {
	res := make(map[InformerKey]bool)
	for g, inf := range f.snapshot() {
		for k, synced := range inf.WaitForCacheSync(ctx) {
			key := InformerKey{Kind: g.kind, Resource: g.resource, InformerKey: k}
			if g.kind == SourceTyped {
				if b, err := resolveBuiltin(k.Type); err == nil {
					key.Resource = b.gvk.GroupVersion().WithResource(b.resource)
				}
			}
			res[key] = synced
		}
	}
	return res
}

// Shutdown stops every informer the factory started, waits until all their
// goroutines have exited, and closes the idle connections of the shared
// HTTP client. Later Starts do nothing. It may be called more than once.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shutdown = true
	f.mu.Unlock()
	for _, inf := range f.snapshot() {
		inf.Shutdown()
	}
	utilnet.CloseIdleConnectionsFor(f.httpClient.Transport)
}

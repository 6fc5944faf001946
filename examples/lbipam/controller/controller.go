// Package controller is a small but complete controller built on
// kinformer: it gives every Service of type LoadBalancer that asks for it
// (spec.loadBalancerClass) an address from a configured pool, and writes
// that address to the Service's status, as a bare-metal load-balancer
// address manager does.
//
// It shows the usual shape: a Factory with one shared informer, a Lister
// for reads, a rate-limited work queue of keys fed by a handler, workers
// that reconcile a key against the cache and write status back to the
// server, and a clean shutdown that waits for every goroutine.
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/workqueue"
)

// DefaultClass is the spec.loadBalancerClass the controller serves by
// default. Services without a class are left to the cluster's own
// load-balancer controller.
const DefaultClass = "example.kinformer.dev/lbipam"

// Options configure New. Config, Pool are required.
type Options struct {
	// Config reaches the cluster.
	Config *rest.Config
	// Pool is the prefix addresses are taken from.
	Pool netip.Prefix
	// Class is the spec.loadBalancerClass served. Default DefaultClass.
	Class string
	// Namespace restricts the controller to one namespace; "" is all.
	Namespace string
	// Workers is the number of reconciling goroutines. Default 2.
	Workers int
	// Logger receives what the controller does. Default slog.Default().
	Logger *slog.Logger
}

// Controller assigns load-balancer addresses. Create it with New, then Run.
type Controller struct {
	opts    Options
	client  kubernetes.Interface
	alloc   *Allocator
	factory *kube.Factory
	// services is the shared informer of Services; lister reads its cache.
	services *informer.Shared[*corev1.Service]
	lister   informer.Lister[*corev1.Service]
	queue    *workqueue.Queue[string]
	log      *slog.Logger
}

// New builds a controller; nothing runs until Run.
func New(opts Options) (*Controller, error) {
	if opts.Config == nil {
		return nil, errors.New("controller: nil Config")
	}
	alloc, err := NewAllocator(opts.Pool)
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	if opts.Class == "" {
		opts.Class = DefaultClass
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	client, err := kubernetes.NewForConfig(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("controller: client: %w", err)
	}
	factory, err := kube.NewFactory(opts.Config, kube.FactoryOptions{Namespace: opts.Namespace})
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	c := &Controller{
		opts:    opts,
		client:  client,
		alloc:   alloc,
		factory: factory,
		queue:   workqueue.New(workqueue.Options[string]{Name: "lbipam"}),
		log:     opts.Logger,
	}
	// An informer of a built-in type makes no request before Start, so no
	// caller's context is needed here.
	c.services, _, err = kube.Informer(context.Background(), c.factory, kube.InformerOptions[*corev1.Service]{
		Transform: informer.DropManagedFields[*corev1.Service],
	})
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	c.lister = informer.NewLister(c.services.Cache())
	enqueue := func(svc *corev1.Service) {
		if key, err := cache.MetaNamespaceKey(svc); err == nil {
			c.queue.Add(key)
		}
	}
	_, err = c.services.AddHandler(informer.HandlerFuncs[*corev1.Service]{
		AddFunc:    func(svc *corev1.Service, _ bool) { enqueue(svc) },
		UpdateFunc: func(_, svc *corev1.Service) { enqueue(svc) },
		// The key is enough: reconcile finds the Service gone and frees
		// its address, even when the deletion itself was missed.
		DeleteFunc: func(svc *corev1.Service, _ bool) { enqueue(svc) },
	}, informer.HandlerOptions{Name: "lbipam"})
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	return c, nil
}

// Run starts the informer, waits for its cache, takes back the addresses
// Services already hold, then reconciles until ctx is done. It returns once
// every goroutine it started has exited.
func (c *Controller) Run(ctx context.Context) error {
	defer c.factory.Shutdown()
	defer c.queue.ShutDown()
	c.factory.Start(ctx)
	for key, ok := range c.factory.WaitForCacheSync(ctx) {
		if !ok {
			return fmt.Errorf("controller: %s did not sync: %w", key, context.Cause(ctx))
		}
	}
	c.adoptExisting()
	c.log.Info("controller synced", "services", c.services.Cache().Len(), "addresses in use", c.alloc.Len())

	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() { c.work(ctx) })
	}
	<-ctx.Done()
	c.queue.ShutDown() // workers finish their item and return
	wg.Wait()
	return nil
}

// adoptExisting claims the addresses managed Services already show, oldest
// Service first, so a restart keeps every address where it was; a Service
// whose address another one holds is given a new one by reconcile.
func (c *Controller) adoptExisting() {
	svcs, _ := c.lister.List(nil)
	slices.SortFunc(svcs, func(a, b *corev1.Service) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	for _, svc := range svcs {
		if !c.manages(svc) {
			continue
		}
		key, _ := cache.MetaNamespaceKey(svc)
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			if addr, err := netip.ParseAddr(ing.IP); err == nil && c.alloc.Claim(key, addr) {
				break
			}
		}
	}
}

func (c *Controller) work(ctx context.Context) {
	for {
		key, err := c.queue.Get(ctx)
		if err != nil {
			return // shut down, or ctx done
		}
		if err := c.reconcile(ctx, key); err != nil {
			c.log.Warn("reconcile failed; will retry", "service", key, "error", err, "attempt", c.queue.NumRequeues(key)+1)
			c.queue.AddRateLimited(key)
		} else {
			c.queue.Forget(key)
		}
		c.queue.Done(key)
	}
}

// manages reports whether svc is one of this controller's.
func (c *Controller) manages(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer &&
		svc.Spec.LoadBalancerClass != nil && *svc.Spec.LoadBalancerClass == c.opts.Class &&
		svc.DeletionTimestamp == nil
}

// reconcile makes the status of the Service called key show its address,
// or frees the address of a Service gone or no longer managed.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not a key this controller made; nothing to retry
	}
	svc, err := c.lister.Namespace(ns).Get(name)
	if errors.Is(err, informer.ErrNotFound) {
		c.release(key)
		return nil
	}
	if err != nil {
		return err
	}
	if !c.manages(svc) {
		c.release(key)
		return nil
	}
	addr, err := c.addressFor(key, svc)
	if err != nil {
		return err
	}
	want := []corev1.LoadBalancerIngress{{IP: addr.String()}}
	if ingressEqual(svc.Status.LoadBalancer.Ingress, want) {
		return nil
	}
	// The cached object is shared: change a copy.
	updated := svc.DeepCopy()
	updated.Status.LoadBalancer.Ingress = want
	_, err = c.client.CoreV1().Services(ns).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.release(key)
		return nil
	case err != nil:
		return fmt.Errorf("update status: %w", err) // a conflict too: retry with the newer object
	}
	c.log.Info("address assigned", "service", key, "address", addr)
	return nil
}

// addressFor keeps the address svc shows when it is still svc's in the
// allocator, and allocates one otherwise.
func (c *Controller) addressFor(key string, svc *corev1.Service) (netip.Addr, error) {
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if addr, err := netip.ParseAddr(ing.IP); err == nil && c.alloc.Claim(key, addr) {
			return addr, nil
		}
	}
	return c.alloc.Allocate(key)
}

func (c *Controller) release(key string) {
	if addr, ok := c.alloc.byOwnerAddr(key); ok {
		c.alloc.Release(key)
		c.log.Info("address released", "service", key, "address", addr)
	}
}

func ingressEqual(a, b []corev1.LoadBalancerIngress) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.LoadBalancerIngress) bool {
		return x.IP == y.IP && x.Hostname == y.Hostname
	})
}

// Package controller is a sharded controller built on kinformer: any
// number of replicas share the ConfigMaps of a cluster by hash range of
// their uids, and each stamps the ConfigMaps it owns with a digest of
// their data, in the annotation example.kinformer.dev/data-sha256, as a
// controller that derives something from each object does.
//
// It shows the shape of a sharded controller: a replicas.Group that holds
// a Lease per replica and hands the replica its share of the hash space,
// a replicas.Informer that caches that share (one watch per range, with
// the server's shard selector when it has ShardedListAndWatch), a handler
// that queues keys on changes and on acquisitions and forgets nothing on
// releases (the key no longer resolves), and workers that check Owns
// before they write. Replicas can come and go, or be killed: ranges move
// only after their new owner has synced them.
package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shard/replicas"
	"github.com/kinformer/kinformer/workqueue"
)

// Annotation holds the hex SHA-256 of a ConfigMap's data.
const Annotation = "example.kinformer.dev/data-sha256"

// Options configure New. Config is required.
type Options struct {
	// Config reaches the cluster.
	Config *rest.Config
	// Namespace restricts the controller to the ConfigMaps of one
	// namespace; "" is all.
	Namespace string
	// Group names the replicas' group; LeaseNamespace holds their Leases.
	// Defaults "shardhash" and "default".
	Group, LeaseNamespace string
	// Identity names this replica (default: host name and a random suffix).
	Identity string
	// Slots, LeaseDuration, RenewPeriod and PollPeriod tune the group (see
	// replicas.GroupOptions; zero values take its defaults).
	Slots                                  int
	LeaseDuration, RenewPeriod, PollPeriod time.Duration
	// Workers is the number of reconciling goroutines. Default 2.
	Workers int
	// DryRun computes the digests but writes nothing.
	DryRun bool
	// Metrics, when set, receives the informers', the group's and the
	// queue's measurements (metrics/prometheus.Provider is all three).
	Metrics interface {
		metrics.Provider
		metrics.ShardProvider
		metrics.WorkqueueProvider
	}
	// Logger receives what the controller does. Default slog.Default().
	Logger *slog.Logger
}

// Controller stamps the ConfigMaps its replica owns. Create it with New,
// then Run.
type Controller struct {
	opts   Options
	client kubernetes.Interface
	group  *replicas.Group
	cms    *replicas.Informer[*corev1.ConfigMap]
	queue  *workqueue.Queue[string]
	log    *slog.Logger

	// Counters of what the handler was told and what workers did.
	added, updated, deleted, acquired, released atomic.Int64
	reconciled, written, notOwned               atomic.Int64
}

// New builds a controller; nothing runs until Run.
func New(opts Options) (*Controller, error) {
	if opts.Config == nil {
		return nil, errors.New("controller: nil Config")
	}
	if opts.Group == "" {
		opts.Group = "shardhash"
	}
	if opts.LeaseNamespace == "" {
		opts.LeaseNamespace = "default"
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
	c := &Controller{opts: opts, client: client, log: opts.Logger}
	var wq workqueue.Options[string]
	wq.Name = "shardhash"
	var infOpts informer.Options[*corev1.ConfigMap]
	infOpts.Transform = informer.DropManagedFields[*corev1.ConfigMap]
	if opts.Metrics != nil {
		wq.Metrics = opts.Metrics
		infOpts.Metrics = opts.Metrics
	}
	c.queue = workqueue.New(wq)
	c.cms, err = replicas.NewInformer(replicas.InformerOptions[*corev1.ConfigMap]{
		Name:  "configmaps",
		Field: shard.UID,
		NewSource: func(set shard.Set) (listwatch.ListerWatcher[*corev1.ConfigMap], error) {
			so := kube.SourceOptions{Selection: kube.Selection{Namespace: opts.Namespace, Shard: set}}
			if opts.Metrics != nil {
				so.ShardMetrics = opts.Metrics.NewShardMetrics("configmaps shard=" + set.String())
			}
			return kube.Source[*corev1.ConfigMap](context.Background(), opts.Config, so) // makes no request
		},
		Informer: infOpts,
	})
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	enqueue := func(cm *corev1.ConfigMap) {
		if key, err := cache.MetaNamespaceKey(cm); err == nil {
			c.queue.Add(key)
		}
	}
	_, err = c.cms.AddHandler(replicas.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:     func(cm *corev1.ConfigMap, _ bool) { c.added.Add(1); enqueue(cm) },
		UpdateFunc:  func(_, cm *corev1.ConfigMap) { c.updated.Add(1); enqueue(cm) },
		DeleteFunc:  func(*corev1.ConfigMap, bool) { c.deleted.Add(1) },
		AcquireFunc: func(cm *corev1.ConfigMap) { c.acquired.Add(1); enqueue(cm) },
		// A released key may still be queued: reconcile finds it no longer
		// owned and leaves it to its new owner.
		ReleaseFunc: func(*corev1.ConfigMap) { c.released.Add(1) },
	})
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	gopts := replicas.GroupOptions{
		Name: opts.Group, Namespace: opts.LeaseNamespace, Identity: opts.Identity,
		Client: client.CoordinationV1(), Slots: opts.Slots,
		LeaseDuration: opts.LeaseDuration, RenewPeriod: opts.RenewPeriod, PollPeriod: opts.PollPeriod,
		Logger: opts.Logger,
	}
	if opts.Metrics != nil {
		gopts.Metrics = opts.Metrics
	}
	if c.group, err = replicas.NewGroup(gopts); err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	if err := c.group.Add(c.cms); err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	return c, nil
}

// Run takes part in the group and reconciles until ctx is done, then hands
// its ranges over (see replicas.Group.Run). It returns once every
// goroutine it started has exited.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() { c.work(ctx) })
	}
	err := c.group.Run(ctx)
	c.queue.ShutDown() // workers finish their item and return
	wg.Wait()
	return err
}

func (c *Controller) work(ctx context.Context) {
	for {
		key, err := c.queue.Get(ctx)
		if err != nil {
			return // shut down, or ctx done
		}
		if err := c.reconcile(ctx, key); err != nil {
			c.log.Warn("reconcile failed; will retry", "configmap", key, "error", err)
			c.queue.AddRateLimited(key)
		} else {
			c.queue.Forget(key)
		}
		c.queue.Done(key)
	}
}

// reconcile stamps the ConfigMap called key, if this replica owns it and
// its stamp is not up to date.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cm, ok := c.cms.Cache().GetByNamespaceName(ns, name)
	if !ok {
		return nil // deleted, or its range went to another replica
	}
	// The per-object ownership check: during a handoff two replicas own a
	// range for a moment; the one giving it up answers false from the
	// start of its release.
	if !c.cms.Owns(cm) {
		c.notOwned.Add(1)
		return nil
	}
	c.reconciled.Add(1)
	want := Digest(cm)
	if cm.Annotations[Annotation] == want || c.opts.DryRun {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{Annotation: want}, "resourceVersion": cm.ResourceVersion}})
	_, err = c.client.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		return nil // changed since cached: the update will bring it back
	case err != nil:
		return err
	}
	c.written.Add(1)
	return nil
}

// Digest is the hex SHA-256 of cm's data and binary data, keys in order.
func Digest(cm *corev1.ConfigMap) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		fmt.Fprintf(h, "%d:%s=%d:%s;", len(k), k, len(cm.Data[k]), cm.Data[k])
	}
	for _, k := range slices.Sorted(maps.Keys(cm.BinaryData)) {
		fmt.Fprintf(h, "%d:%s=%d:", len(k), k, len(cm.BinaryData[k]))
		h.Write(cm.BinaryData[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

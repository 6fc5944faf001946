package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kinformer/kinformer/integrations/controllerruntime"
	"github.com/kinformer/kinformer/shard/replicas"
)

const (
	namespace = "shards"
	// label marks the config maps of the example; stamp is the
	// annotation the controller writes.
	label = "example.kinformer.dev/shards"
	stamp = "example.kinformer.dev/reconciled-by"
)

// replica runs one replica's manager until ctx is done, then leaves its
// group (handing its share over).
func replica(ctx context.Context, id string) error {
	ctrl.SetLogger(logr.Discard())
	lease, err := time.ParseDuration(os.Getenv(leaseEnv))
	if err != nil {
		lease = replicas.DefaultLeaseDuration
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	mgr, err := manager.New(cfg, manager.Options{
		// The one change for sharding: config maps are shared between
		// the replicas of group "shards-example", whose Leases are in
		// the namespace "shards".
		NewCache: controllerruntime.NewCache(controllerruntime.Options{Shards: map[client.Object]controllerruntime.Shard{
			&corev1.ConfigMap{}: {Replicas: replicas.GroupOptions{
				Name: "shards-example", Namespace: namespace, Identity: id,
				LeaseDuration: lease, RenewPeriod: lease / 6,
			}},
		}}),
		Cache: crcache.Options{ByObject: map[client.Object]crcache.ByObject{
			&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(labels.Set{label: "yes"})},
		}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	c := mgr.GetClient()
	err = ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		// Every replica runs its controller: leader election off.
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
				// Not found: deleted, or in another replica's share now.
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			if cm.Annotations[stamp] == id {
				return reconcile.Result{}, nil
			}
			patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, stamp, id)
			err := c.Patch(ctx, &cm, client.RawPatch(types.MergePatchType, patch))
			if apierrors.IsNotFound(err) {
				return reconcile.Result{}, nil
			}
			return reconcile.Result{}, err
		}))
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

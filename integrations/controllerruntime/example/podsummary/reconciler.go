// Package podsummary is a plain controller-runtime controller, written as one
// would for any manager, used to show that kinformer's cache is a drop-in:
// the example and the benchmark run it unchanged on controller-runtime's
// default cache and on kinformer's, and compare what it saw.
package podsummary

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// AppIndex is the field index of pods by their "app" label.
const AppIndex = "metadata.labels.app"

// Reconciler reconciles apps, as a ReplicaSet controller reconciles its
// pods: a pod's change enqueues its app (namespace and "app" label), and a
// reconcile reads the app's pods through an index and reports a one-line
// summary of them. It writes nothing to the server.
type Reconciler struct {
	Client client.Client
	// Report is told the summary of every reconcile.
	Report func(req reconcile.Request, summary string)
}

// Reconcile implements reconcile.Reconciler: req names an app.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(req.Namespace), client.MatchingFields{AppIndex: req.Name}); err != nil {
		return reconcile.Result{}, err
	}
	ready, containers := 0, 0
	var names, nodes []string
	for _, p := range pods.Items {
		names = append(names, p.Name+"@"+p.ResourceVersion+":"+string(p.Status.Phase))
		if !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
		containers += len(p.Spec.Containers)
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	slices.Sort(names)
	r.Report(req, fmt.Sprintf("pods=%d ready=%d containers=%d nodes=%d %v", len(pods.Items), ready, containers, len(nodes), names))
	return reconcile.Result{}, nil
}

// SetupWithManager adds the app index and the controller to mgr.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, AppIndex, func(o client.Object) []string {
		return []string{o.GetLabels()["app"]}
	})
	if err != nil {
		return err
	}
	appOf := func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetLabels()["app"]}}}
	}
	return ctrl.NewControllerManagedBy(mgr).Named("podsummary").
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(appOf)).
		Complete(r)
}

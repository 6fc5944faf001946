// Package podsummary is a plain controller-runtime controller, written as one
// would for any manager, used to show that kinformer's cache is a drop-in:
// the example and the benchmark run it unchanged on controller-runtime's
// default cache and on kinformer's, and compare what it saw.
package podsummary

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// AppIndex is the field index of pods by their "app" label.
const AppIndex = "metadata.labels.app"

// Reconciler reconciles pods: it reads the pod, and the pods of the same app
// in its namespace through an index, and reports a one-line summary of what
// it read. It writes nothing to the server.
type Reconciler struct {
	Client client.Client
	// Report is told the summary of every reconcile.
	Report func(req reconcile.Request, summary string)
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var pod corev1.Pod
	if err := r.Client.Get(ctx, req.NamespacedName, &pod); err != nil {
		r.Report(req, "gone")
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var app corev1.PodList
	if err := r.Client.List(ctx, &app, client.InNamespace(pod.Namespace), client.MatchingFields{AppIndex: pod.Labels["app"]}); err != nil {
		return reconcile.Result{}, err
	}
	ready := 0
	for _, p := range app.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	r.Report(req, fmt.Sprintf("rv=%s phase=%s node=%s containers=%d app=%s pods=%d ready=%d",
		pod.ResourceVersion, pod.Status.Phase, pod.Spec.NodeName, len(pod.Spec.Containers), pod.Labels["app"], len(app.Items), ready))
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
	return ctrl.NewControllerManagedBy(mgr).For(&corev1.Pod{}).Named("podsummary").Complete(r)
}

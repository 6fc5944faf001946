// Package podview is package podsummary's reconciler reading pod views
// instead of pods: the same apps, the same summaries, and with kinformer's
// cache, only the views cached.
package podview

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kinformer/kinformer/integrations/controllerruntime"
	"github.com/kinformer/kinformer/integrations/controllerruntime/example/podsummary"
)

// PodView is what ViewReconciler reads of a pod, declared once: with
// kinformer's cache, the manager caches these views instead of pods.
type PodView struct {
	controllerruntime.View[*corev1.Pod]
	NodeName   string          `kube:"spec.nodeName"`
	Phase      corev1.PodPhase `kube:"status.phase"`
	Containers []struct {
		Name string `kube:"name"`
	} `kube:"spec.containers"`
	Conditions []struct {
		Type   corev1.PodConditionType `kube:"type"`
		Status corev1.ConditionStatus  `kube:"status"`
	} `kube:"status.conditions"`
}

// DeepCopyObject makes PodView a runtime.Object.
func (v *PodView) DeepCopyObject() runtime.Object { return controllerruntime.DeepCopy(v) }

// ViewReconciler is podsummary.Reconciler reading PodViews: the same apps, the same
// summaries.
type ViewReconciler struct {
	Client client.Client
	Report func(req reconcile.Request, summary string)
}

// Reconcile implements reconcile.Reconciler: req names an app.
func (r *ViewReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var pods controllerruntime.ViewList[*PodView]
	if err := r.Client.List(ctx, &pods, client.InNamespace(req.Namespace), client.MatchingFields{podsummary.AppIndex: req.Name}); err != nil {
		return reconcile.Result{}, err
	}
	ready, containers := 0, 0
	var names, nodes []string
	for _, p := range pods.Items {
		names = append(names, p.Name+"@"+p.ResourceVersion+":"+string(p.Phase))
		if !slices.Contains(nodes, p.NodeName) {
			nodes = append(nodes, p.NodeName)
		}
		containers += len(p.Containers)
		for _, c := range p.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	slices.Sort(names)
	r.Report(req, fmt.Sprintf("pods=%d ready=%d containers=%d nodes=%d %v", len(pods.Items), ready, containers, len(nodes), names))
	return reconcile.Result{}, nil
}

// SetupWithManager adds the app index on views and the controller to mgr,
// whose scheme must have PodView (controllerruntime.AddView).
func (r *ViewReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	err := mgr.GetFieldIndexer().IndexField(ctx, &PodView{}, podsummary.AppIndex, func(o client.Object) []string {
		return []string{o.GetLabels()["app"]}
	})
	if err != nil {
		return err
	}
	appOf := func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetLabels()["app"]}}}
	}
	return ctrl.NewControllerManagedBy(mgr).Named("podsummary-view").
		Watches(&PodView{}, handler.EnqueueRequestsFromMapFunc(appOf)).
		Complete(r)
}

// RunView is podsummary.Run with ViewReconciler on kinformer's cache made by newCache
// (controllerruntime.New, or NewCache with opt-ins), in a scheme of
// client-go's types and PodView.
func RunView(ctx context.Context, cfg *rest.Config, newCache cache.NewCacheFunc, want int) (podsummary.Result, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return podsummary.Result{}, err
	}
	if err := controllerruntime.AddView[*PodView](scheme); err != nil {
		return podsummary.Result{}, err
	}
	return podsummary.RunWith(ctx, cfg, manager.Options{Scheme: scheme, NewCache: newCache}, want, func(mgr manager.Manager, report func(reconcile.Request, string)) interface {
		SetupWithManager(context.Context, ctrl.Manager) error
	} {
		return &ViewReconciler{Client: mgr.GetClient(), Report: report}
	})
}

package controllerruntime

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// controller-runtime's EnableReadYourWritesConsistency on each cache: every
// read through the manager's client after a write of the same client sees
// that write — created, updated, patched through the status subresource,
// deleted — at once, with no retry, many times over (a stale cache would
// fail one of them). controller-runtime waits through the event handler it
// registers on the cache's informers (see the package doc: the seam leaves
// kinformer's own version waits out).
func TestReadYourWrites(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			ns := newNamespace(t)
			mgr := newTestManager(t, viewScheme(t), manager.Options{
				NewCache: im.new,
				Client:   client.Options{Cache: &client.CacheOptions{EnableReadYourWritesConsistency: ptr.To(true)}},
			})
			stop := startManager(t, mgr)
			defer stop()
			if !mgr.GetCache().WaitForCacheSync(t.Context()) {
				t.Fatal("cache did not sync")
			}
			c := mgr.GetClient()
			ctx := t.Context()
			const rounds = 30
			for i := range rounds {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"v": "0"}}
				if err := c.Create(ctx, cm); err != nil {
					t.Fatal(err)
				}
				var got corev1.ConfigMap
				if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
					t.Fatalf("round %d: Get after Create: %v", i, err)
				}
				var list corev1.ConfigMapList
				if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
					t.Fatal(err)
				}
				if len(list.Items) != 1 {
					t.Fatalf("round %d: List after Create: %d config maps, want 1", i, len(list.Items))
				}
				got.Data["v"] = "1"
				if err := c.Update(ctx, &got); err != nil {
					t.Fatal(err)
				}
				var updated corev1.ConfigMap
				if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &updated); err != nil {
					t.Fatal(err)
				}
				if updated.Data["v"] != "1" || updated.ResourceVersion != got.ResourceVersion {
					t.Fatalf("round %d: Get after Update: v=%q rv=%s, want v=1 rv=%s", i, updated.Data["v"], updated.ResourceVersion, got.ResourceVersion)
				}
				if err := c.Delete(ctx, &updated); err != nil {
					t.Fatal(err)
				}
				if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
					t.Fatalf("round %d: Get after Delete: err = %v, want NotFound", i, err)
				}
			}
			// Pods: a status patch (the subresource client) and a delete
			// whose response carries the deletion's resource version (a
			// pod's delete returns the pod; a config map's only a status).
			for i := range rounds / 3 {
				p := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p-%d", i), Labels: map[string]string{"round": fmt.Sprint(i)}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
				}
				if err := c.Create(ctx, p); err != nil {
					t.Fatal(err)
				}
				patch := client.MergeFrom(p.DeepCopy())
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
				if err := c.Status().Patch(ctx, p, patch); err != nil {
					t.Fatal(err)
				}
				var pods corev1.PodList
				if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"round": fmt.Sprint(i)}); err != nil {
					t.Fatal(err)
				}
				if len(pods.Items) != 1 || pods.Items[0].ResourceVersion != p.ResourceVersion || len(pods.Items[0].Status.Conditions) != 1 {
					t.Fatalf("round %d: List after a status patch: %d pods, want 1 at rv %s with its condition", i, len(pods.Items), p.ResourceVersion)
				}
				if err := c.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil {
					t.Fatal(err)
				}
				if err := c.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{}); !apierrors.IsNotFound(err) {
					t.Fatalf("round %d: Get of a pod after Delete: err = %v, want NotFound", i, err)
				}
			}
		})
	}
}

package controllerruntime

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kinformer/kinformer/shard/replicas"
)

// reconciles records which manager reconciled which config map, by the
// round written in its data.
type reconciles struct {
	mu sync.Mutex
	by map[string]map[string][]string // round -> name -> manager ids
}

func (r *reconciles) note(round, name, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.by[round] == nil {
		r.by[round] = map[string][]string{}
	}
	if !slices.Contains(r.by[round][name], id) {
		r.by[round][name] = append(r.by[round][name], id)
	}
}

func (r *reconciles) of(round string) map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for n, ids := range r.by[round] {
		out[n] = slices.Clone(ids)
	}
	return out
}

// shardManager is one of the managers sharing the config maps.
type shardManager struct {
	id   string
	mgr  manager.Manager
	stop func()
}

// cached returns the names of the config maps the manager's cache holds.
func (m *shardManager) cached(t *testing.T, sel labels.Selector) []string {
	t.Helper()
	var l corev1.ConfigMapList
	if err := m.mgr.GetCache().List(t.Context(), &l, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, cm := range l.Items {
		out = append(out, cm.Name)
	}
	return out
}

// Three managers, each with a sharded cache of config maps and a
// controller with leader election off, share the config maps completely
// and disjointly; one stops (its context cancelled) and the two others
// take its share; after an update of every config map, each is reconciled
// by exactly one of the two live managers. The apiserver of the shared
// control plane has ShardedListAndWatch off, so the sources filter by
// shard themselves (example/shards runs the gate on).
func TestShardsShareAReconciledResourceBetweenManagers(t *testing.T) {
	ns := newNamespace(t)
	const n = 90
	sel := labels.SelectorFromSet(labels.Set{"shards-e2e": ns})
	var all []string
	for i := range n {
		name := fmt.Sprintf("cm-%03d", i)
		all = append(all, name)
		createConfigMap(t, ns, name, map[string]string{"shards-e2e": ns}, map[string]string{"round": "1"})
	}
	rec := &reconciles{by: map[string]map[string][]string{}}
	var managers []*shardManager
	for i := range 3 {
		id := fmt.Sprintf("m%d", i)
		mgr := newTestManager(t, clientgoscheme.Scheme, manager.Options{
			NewCache: NewCache(Options{Shards: map[client.Object]Shard{&corev1.ConfigMap{}: {
				Replicas: replicas.GroupOptions{Name: "shards-" + ns, Namespace: ns, Identity: id,
					LeaseDuration: 6 * time.Second, RenewPeriod: time.Second},
			}}}),
			Cache: crcache.Options{ByObject: map[client.Object]crcache.ByObject{&corev1.ConfigMap{}: {Label: sel}}},
		})
		c := mgr.GetClient()
		err := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("shards-" + id).
			WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
			Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				var cm corev1.ConfigMap
				if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
					if apierrors.IsNotFound(err) {
						return reconcile.Result{}, nil // deleted, or another manager's now
					}
					return reconcile.Result{}, err
				}
				rec.note(cm.Data["round"], cm.Name, id)
				return reconcile.Result{}, nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		m := &shardManager{id: id, mgr: mgr, stop: startManager(t, mgr)}
		defer m.stop()
		managers = append(managers, m)
	}

	// shared waits until the live managers' caches hold every config map
	// once, and each at least one.
	shared := func(what string, live []*shardManager) {
		t.Helper()
		var got [][]string
		eventually(t, what, func() bool {
			if !leasesSettled(t, ns, "shards-"+ns, live) {
				return false
			}
			got = got[:0]
			var union []string
			for _, m := range live {
				names := m.cached(t, sel)
				if len(names) == 0 {
					return false
				}
				got = append(got, names)
				union = append(union, names...)
			}
			slices.Sort(union)
			return slices.Equal(union, all)
		})
		for i, m := range live {
			t.Logf("%s caches %d of %d config maps", m.id, len(got[i]), n)
		}
	}
	shared("three managers share the config maps", managers)
	// (Before the first split, a manager that joined alone may have owned
	// everything for a moment: round 1 may have more than one reconciler.)
	eventually(t, "every config map reconciled", func() bool { return len(rec.of("1")) == n })

	stoppedAt := time.Now()
	managers[2].stop()
	live := managers[:2]
	shared("two managers take the third's share", live)
	t.Logf("the survivors hold every config map %v after the third stopped (Lease duration 6s)",
		time.Since(stoppedAt).Round(time.Millisecond))

	for _, name := range all {
		cm, err := clientset().CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["round"] = "2"
		if _, err := clientset().CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "every updated config map reconciled", func() bool { return len(rec.of("2")) == n })
	for name, ids := range rec.of("2") {
		if len(ids) != 1 || ids[0] == "m2" {
			t.Errorf("%s reconciled by %v after the update, want one of m0 and m1", name, ids)
		}
	}
	// And each by the manager that caches it.
	for _, m := range live {
		for _, name := range m.cached(t, sel) {
			if ids := rec.of("2")[name]; len(ids) != 1 || ids[0] != m.id {
				t.Errorf("%s is cached by %s and reconciled by %v", name, m.id, ids)
			}
		}
	}
}

// leasesSettled reports whether the group's Leases are those of live
// alone, none leaving, and claim every range once, as the split assigns.
func leasesSettled(t *testing.T, ns, group string, live []*shardManager) bool {
	t.Helper()
	list, err := clientset().CoordinationV1().Leases(ns).List(t.Context(), metav1.ListOptions{LabelSelector: replicas.GroupLabel + "=" + group})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range live {
		ids = append(ids, m.id)
	}
	owner := replicas.Assign(ids, replicas.DefaultSlots)
	claimed := make([][]string, replicas.DefaultSlots)
	if len(list.Items) != len(live) {
		return false
	}
	for _, l := range list.Items {
		if l.Spec.HolderIdentity == nil || l.Annotations[replicas.LeavingAnnotation] == "true" {
			return false
		}
		if r := l.Annotations[replicas.RangesAnnotation]; r != "" {
			for part := range strings.SplitSeq(r, ",") {
				s, err := strconv.Atoi(part)
				if err != nil || s < 0 || s >= len(claimed) {
					t.Fatalf("Lease %s claims %q", l.Name, r)
				}
				claimed[s] = append(claimed[s], *l.Spec.HolderIdentity)
			}
		}
	}
	for s := range claimed {
		if !slices.Equal(claimed[s], []string{owner[s]}) {
			return false
		}
	}
	return true
}

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// workload creates, updates and deletes pods and configmaps in a few
// namespaces at a steady rate, keeping each kind near a target count per
// namespace, so the caches have something to follow.
type workload struct {
	client     kubernetes.Interface
	namespaces []string
	// perNamespace is the number of objects of each kind kept per
	// namespace, on average.
	perNamespace int
	// rate is the number of changes per second.
	rate float64
	rng  *rand.Rand

	// Counts of changes made, read by the summary.
	creates, updates, deletes, failures atomic.Int64
	// next numbers new objects; names are never reused.
	next int
	// live holds the names of the objects the workload believes exist,
	// per kind and namespace. Used by run's goroutine only.
	live map[string][]string
}

const demoLabel = "kinformer.dev/demo"

func newWorkload(client kubernetes.Interface, namespaces []string, perNamespace int, rate float64) *workload {
	return &workload{
		client: client, namespaces: namespaces, perNamespace: perNamespace, rate: rate,
		rng:  rand.New(rand.NewPCG(1, 2)),
		live: map[string][]string{},
	}
}

// setUp creates the namespaces and the initial objects.
func (w *workload) setUp(ctx context.Context) error {
	for _, ns := range w.namespaces {
		_, err := w.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
		for range w.perNamespace {
			for _, kind := range []string{"pod", "configmap"} {
				if err := w.create(ctx, kind, ns); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// run makes changes at w.rate until ctx is done. Failed changes are
// counted, not fatal: the demo goes on.
func (w *workload) run(ctx context.Context) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / w.rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		kind := []string{"pod", "configmap"}[w.rng.IntN(2)]
		ns := w.namespaces[w.rng.IntN(len(w.namespaces))]
		names := w.live[kind+"/"+ns]
		var err error
		// Below the target, create more often than delete; above, less.
		pCreate := 0.3
		if len(names) < w.perNamespace {
			pCreate = 0.45
		} else if len(names) > w.perNamespace {
			pCreate = 0.15
		}
		switch r := w.rng.Float64(); {
		case r < pCreate || len(names) == 0:
			err = w.create(ctx, kind, ns)
		case r < 0.6:
			err = w.delete(ctx, kind, ns)
		default:
			err = w.update(ctx, kind, ns)
		}
		if err != nil && ctx.Err() == nil {
			w.failures.Add(1)
		}
	}
}

func (w *workload) create(ctx context.Context, kind, ns string) error {
	w.next++
	name := fmt.Sprintf("demo-%s-%05d", kind, w.next)
	meta := metav1.ObjectMeta{Name: name, Labels: map[string]string{demoLabel: "true", "generation": "0"}}
	var err error
	if kind == "pod" {
		_, err = w.client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: meta,
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		}, metav1.CreateOptions{})
	} else {
		_, err = w.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: meta,
			Data:       map[string]string{"value": "0"},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	w.creates.Add(1)
	w.live[kind+"/"+ns] = append(w.live[kind+"/"+ns], name)
	return nil
}

func (w *workload) pick(kind, ns string) (string, int) {
	names := w.live[kind+"/"+ns]
	i := w.rng.IntN(len(names))
	return names[i], i
}

func (w *workload) update(ctx context.Context, kind, ns string) error {
	name, _ := w.pick(kind, ns)
	n := w.rng.IntN(1000)
	var err error
	if kind == "pod" {
		patch := fmt.Sprintf(`{"metadata":{"labels":{"generation":"%d"}}}`, n)
		_, err = w.client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	} else {
		patch := fmt.Sprintf(`{"data":{"value":"%d"}}`, n)
		_, err = w.client.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	}
	if err == nil {
		w.updates.Add(1)
	}
	return err
}

func (w *workload) delete(ctx context.Context, kind, ns string) error {
	name, i := w.pick(kind, ns)
	zero := int64(0)
	opts := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	var err error
	if kind == "pod" {
		err = w.client.CoreV1().Pods(ns).Delete(ctx, name, opts)
	} else {
		err = w.client.CoreV1().ConfigMaps(ns).Delete(ctx, name, opts)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	names := w.live[kind+"/"+ns]
	names[i] = names[len(names)-1]
	w.live[kind+"/"+ns] = names[:len(names)-1]
	w.deletes.Add(1)
	return nil
}

// serverCounts lists what the server holds in the workload's namespaces.
func (w *workload) serverCounts(ctx context.Context) (pods, configMaps int, err error) {
	sel := metav1.ListOptions{LabelSelector: demoLabel}
	for _, ns := range w.namespaces {
		p, err := w.client.CoreV1().Pods(ns).List(ctx, sel)
		if err != nil {
			return 0, 0, err
		}
		c, err := w.client.CoreV1().ConfigMaps(ns).List(ctx, sel)
		if err != nil {
			return 0, 0, err
		}
		pods += len(p.Items)
		configMaps += len(c.Items)
	}
	return pods, configMaps, nil
}

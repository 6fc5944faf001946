package testenv

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultWorkers is how many requests the bulk helpers keep in flight when BulkOptions.Workers
// is 0. The apiserver admits 200 concurrent mutating requests by default; 32 keeps it busy
// on two cores without queueing.
const DefaultWorkers = 32

// BulkOptions shape the objects CreatePods and CreateConfigMaps make.
type BulkOptions struct {
	// NamePrefix: object i (0 ≤ i < n) is named NamePrefix followed by i in decimal.
	// Empty means "pod-" or "cm-".
	NamePrefix string
	// Labels are put on every object.
	Labels map[string]string
	// Workers is how many create requests are in flight at once; 0 means DefaultWorkers.
	Workers int
}

// Parallel calls fn(ctx, i) for every i in [0, n), at most workers calls at a time (0 means
// DefaultWorkers), and returns once every call has returned. The first error cancels the
// context passed to the calls still running, stops new calls from starting, and is returned.
// The order of calls is unspecified.
func Parallel(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	if workers <= 0 {
		workers = DefaultWorkers
	}
	workers = min(workers, n)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64 // next index to hand out
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { // Exits when the indices run out or ctx is done.
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && ctx.Err() != nil {
		return err
	}
	return nil
}

// CreateNamespace creates a namespace named name; one that already exists is not an error.
func (e *Env) CreateNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_, err := e.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("testenv: create namespace %s: %w", name, err)
	}
	return nil
}

// CreatePods creates n pods in namespace concurrently (see BulkOptions) and returns once all
// exist or the first error. No scheduler or kubelet runs, so the pods stay Pending; each has
// one container running the pause image and is otherwise minimal.
func (e *Env) CreatePods(ctx context.Context, namespace string, n int, opts BulkOptions) error {
	prefix := opts.NamePrefix
	if prefix == "" {
		prefix = "pod-"
	}
	pods := e.kube.CoreV1().Pods(namespace)
	return Parallel(ctx, n, opts.Workers, func(ctx context.Context, i int) error {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: prefix + strconv.Itoa(i), Labels: opts.Labels},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
			},
		}
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("testenv: create pod %s/%s: %w", namespace, pod.Name, err)
		}
		return nil
	})
}

// CreateConfigMaps creates n config maps in namespace concurrently (see BulkOptions), each
// with one data key "index" holding its number, and returns once all exist or the first
// error.
func (e *Env) CreateConfigMaps(ctx context.Context, namespace string, n int, opts BulkOptions) error {
	prefix := opts.NamePrefix
	if prefix == "" {
		prefix = "cm-"
	}
	cms := e.kube.CoreV1().ConfigMaps(namespace)
	return Parallel(ctx, n, opts.Workers, func(ctx context.Context, i int) error {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: prefix + strconv.Itoa(i), Labels: opts.Labels},
			Data:       map[string]string{"index": strconv.Itoa(i)},
		}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("testenv: create config map %s/%s: %w", namespace, cm.Name, err)
		}
		return nil
	})
}

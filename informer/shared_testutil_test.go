package informer

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
)

// fixedTime is where fake clocks start.
var fixedTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// cm builds a ConfigMap in namespace "ns" at resource version rv.
func cm(name string, rv int) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: name, ResourceVersion: strconv.Itoa(rv),
	}}
}

func keyOf(obj cache.Object) string {
	k, err := cache.MetaNamespaceKey(obj)
	if err != nil {
		panic(err)
	}
	return k
}

// viewRecorder is a handler that builds its view of the cache only from the
// notifications it receives, and records every notification that could
// not have come from a correct informer: an add of an object it holds, an
// update or delete of one it does not, an update whose old state is not
// the one it holds.
type viewRecorder[T cache.Object] struct {
	// gate, when set, is received from before each call (a way to make
	// the handler slow or stuck).
	gate chan struct{}
	// onCall, when set, runs at the start of each call.
	onCall func()

	mu      sync.Mutex // guards the fields below
	view    map[string]T
	errs    []string
	adds    int
	initial int
	updates int
	deletes int
	unknown int
	// order is every call's key, in order, when recordOrder is set.
	recordOrder bool
	order       []string
	calls       atomic.Int64
}

func newViewRecorder[T cache.Object]() *viewRecorder[T] {
	return &viewRecorder[T]{view: map[string]T{}}
}

func (r *viewRecorder[T]) enter() {
	if r.gate != nil {
		<-r.gate
	}
	if r.onCall != nil {
		r.onCall()
	}
	r.calls.Add(1)
}

func (r *viewRecorder[T]) OnAdd(obj T, isInInitialList bool) {
	r.enter()
	r.mu.Lock()
	defer r.mu.Unlock()
	k := keyOf(obj)
	if _, ok := r.view[k]; ok {
		r.errs = append(r.errs, "add of held "+k)
	}
	r.view[k] = obj
	r.adds++
	if isInInitialList {
		r.initial++
	}
	if r.recordOrder {
		r.order = append(r.order, "add "+k)
	}
}

func (r *viewRecorder[T]) OnUpdate(oldObj, newObj T) {
	r.enter()
	r.mu.Lock()
	defer r.mu.Unlock()
	k := keyOf(newObj)
	cur, ok := r.view[k]
	switch {
	case !ok:
		r.errs = append(r.errs, "update of absent "+k)
	case cur.GetResourceVersion() != oldObj.GetResourceVersion():
		r.errs = append(r.errs, fmt.Sprintf("update of %s from rv %s, held rv %s", k, oldObj.GetResourceVersion(), cur.GetResourceVersion()))
	}
	r.view[k] = newObj
	r.updates++
	if r.recordOrder {
		r.order = append(r.order, "update "+k)
	}
}

func (r *viewRecorder[T]) OnDelete(obj T, stateUnknown bool) {
	r.enter()
	r.mu.Lock()
	defer r.mu.Unlock()
	k := keyOf(obj)
	if _, ok := r.view[k]; !ok {
		r.errs = append(r.errs, "delete of absent "+k)
	}
	delete(r.view, k)
	r.deletes++
	if stateUnknown {
		r.unknown++
	}
	if r.recordOrder {
		r.order = append(r.order, "delete "+k)
	}
}

// versions returns key → resource version of the recorder's view.
func (r *viewRecorder[T]) versions() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return versionsOf(slices.Collect(maps.Values(r.view)))
}

func (r *viewRecorder[T]) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errs)
}

func versionsOf[T cache.Object](objs []T) map[string]string {
	m := make(map[string]string, len(objs))
	for _, o := range objs {
		m[keyOf(o)] = o.GetResourceVersion()
	}
	return m
}

// checkpointerOf returns the informer's checkpointer, nil when it has none.
func checkpointerOf[T cache.Object](inf *Shared[T]) *checkpointer[T] {
	for _, s := range inf.stages {
		if c, ok := s.(*checkpointer[T]); ok {
			return c
		}
	}
	return nil
}

// detectorOf returns the informer's mutation detector, nil when it has
// none.
func detectorOf[T cache.Object](inf *Shared[T]) *mutationDetector[T] {
	for _, s := range inf.stages {
		if d, ok := s.(*mutationDetector[T]); ok {
			return d
		}
	}
	return nil
}

package workqueue_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/workqueue"
)

// TestEnqueueOnASharedInformer registers NewEnqueue's handler with a real
// shared informer over 100 objects: after the initial list, a change to one
// of them and a new object are handed out before the 99 others.
func TestEnqueueOnASharedInformer(t *testing.T) {
	src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
	if err != nil {
		t.Fatal(err)
	}
	cm := func(i int) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("cm-%03d", i)}}
	}
	for i := range 100 {
		if _, err := src.Create(cm(i)); err != nil {
			t.Fatal(err)
		}
	}
	inf, err := informer.NewShared(informer.Options[*corev1.ConfigMap]{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	q := workqueue.New(workqueue.Options[string]{Name: "cms"})
	defer q.ShutDown()
	h := workqueue.NewEnqueue(q, workqueue.EnqueueOptions[*corev1.ConfigMap, string]{Key: cache.MetaNamespaceKey[*corev1.ConfigMap]})
	changes := make(chan struct{}, 2) // one per live notification, after it is queued
	reg, err := inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(obj *corev1.ConfigMap, initial bool) {
			h.OnAdd(obj, initial)
			if !initial {
				changes <- struct{}{}
			}
		},
		UpdateFunc: func(oldObj, newObj *corev1.ConfigMap) {
			h.OnUpdate(oldObj, newObj)
			changes <- struct{}{}
		},
	}, informer.HandlerOptions{Name: "enqueue"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- inf.Run(ctx) }()
	defer func() { cancel(); <-done }()

	<-reg.Synced()
	changed := cm(42)
	changed.Data = map[string]string{"k": "v"}
	if _, err := src.Update(changed); err != nil {
		t.Fatal(err)
	}
	<-changes
	if _, err := src.Create(cm(100)); err != nil {
		t.Fatal(err)
	}
	<-changes

	var got []string
	for q.Len() > 0 {
		key, err := q.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, key)
		q.Done(key)
	}
	if want := []string{"ns/cm-042", "ns/cm-100"}; !slices.Equal(got[:2], want) {
		t.Fatalf("first handed out %v, want %v", got[:2], want)
	}
	rest := slices.Sorted(slices.Values(got[2:]))
	var want []string
	for i := range 100 {
		if i != 42 {
			want = append(want, fmt.Sprintf("ns/cm-%03d", i))
		}
	}
	if !slices.Equal(rest, want) {
		t.Fatalf("after the changes, handed out %d keys, want the 99 others of the initial list", len(rest))
	}
}

package informer_test

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// A shared informer over an in-memory source: a handler sees the initial
// list, then live changes; the cache answers reads.
func ExampleShared() {
	src, _ := fake.New(fake.Options[*corev1.ConfigMap]{})
	src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}})

	inf, err := informer.NewShared(informer.Options[*corev1.ConfigMap]{
		Source:    src,
		Transform: informer.DropManagedFields[*corev1.ConfigMap],
	})
	if err != nil {
		panic(err)
	}
	updated := make(chan struct{})
	reg, _ := inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, isInInitialList bool) {
			fmt.Printf("add %s/%s, in initial list: %v\n", cm.Namespace, cm.Name, isInInitialList)
		},
		UpdateFunc: func(oldCM, newCM *corev1.ConfigMap) {
			fmt.Printf("update %s: data %v -> %v\n", newCM.Name, oldCM.Data, newCM.Data)
			close(updated)
		},
	}, informer.HandlerOptions{Name: "printer"})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- inf.Run(ctx) }()

	<-reg.Synced() // the handler has processed the initial list
	src.Update(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"},
		Data:       map[string]string{"mode": "fast"},
	})
	<-updated
	cached, _, _ := inf.Cache().GetByKey("default/settings")
	fmt.Println("cached:", cached.Data["mode"])

	cancel()
	<-done // Run returns once every goroutine it started has exited
	// Output:
	// add default/settings, in initial list: true
	// update settings: data map[] -> map[mode:fast]
	// cached: fast
}

// Read your own writes: a write returns the object's new resource version;
// waiting for it makes the write visible in the cache (and every Lister).
func ExampleShared_WaitForKey() {
	src, _ := fake.New(fake.Options[*corev1.ConfigMap]{})
	inf, _ := informer.NewShared(informer.Options[*corev1.ConfigMap]{Source: src})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- inf.Run(ctx) }()
	inf.WaitForCacheSync(ctx)

	written, _ := src.Create(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"},
		Data:       map[string]string{"mode": "fast"},
	})
	if err := inf.WaitForKey(ctx, "default/settings", written.ResourceVersion); err != nil {
		panic(err)
	}
	cached, _, _ := inf.Cache().GetByKey("default/settings")
	fmt.Println("cached:", cached.Data["mode"], "at the written version:", cached.ResourceVersion == written.ResourceVersion)

	err := inf.WaitForResourceVersion(ctx, "not-a-number")
	fmt.Println(errors.Is(err, informer.ErrIncomparableVersion))

	cancel()
	<-done
	// Output:
	// cached: fast at the written version: true
	// true
}

package fake_test

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

func Example() {
	src, _ := fake.New(fake.Options[*corev1.ConfigMap]{CompactionWindow: 100})
	src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}})

	ctx := context.Background()
	page, _ := src.List(ctx, listwatch.Options{ResourceVersion: "0"})
	w, _ := src.Watch(ctx, listwatch.Options{ResourceVersion: page.ResourceVersion, AllowBookmarks: true})
	defer w.Close()

	src.Delete("default", "a")
	src.Bookmark()
	src.SendError(fmt.Errorf("too old: %w", listwatch.ErrExpired))
	for {
		ev, err := w.Next()
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(ev.Type, ev.ResourceVersion, ev.Err)
	}
	// Output:
	// DELETED 3 <nil>
	// BOOKMARK 3 <nil>
	// ERROR  too old: resource version expired
	// EOF
}

// A fault fired while no watch is open is held for the next watch opened.
// A dropped change ends that watch with an expired Error event, even when
// nothing is written after it.
func ExampleSource_DropNextEvent() {
	src, _ := fake.New(fake.Options[*corev1.ConfigMap]{})
	src.DropNextEvent() // no watch open: held

	w, _ := src.Watch(context.Background(), listwatch.Options{ResourceVersion: src.ResourceVersion()})
	defer w.Close()
	src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}) // dropped
	for {
		ev, err := w.Next()
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(ev.Type, errors.Is(ev.Err, listwatch.ErrExpired))
	}
	// Output:
	// ERROR true
	// EOF
}

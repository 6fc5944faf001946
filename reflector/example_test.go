package reflector_test

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/reflector"
)

// signalingStore closes filled after its first Replace.
type signalingStore struct {
	*cache.StoreWriter[*corev1.ConfigMap]
	once   sync.Once
	filled chan struct{} // closed by the first Replace
}

func (s *signalingStore) Replace(items []*corev1.ConfigMap, rv string) error {
	err := s.StoreWriter.Replace(items, rv)
	s.once.Do(func() { close(s.filled) })
	return err
}

func Example() {
	src, _ := fake.New(fake.Options[*corev1.ConfigMap]{})
	for _, name := range []string{"a", "b"} {
		src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})
	}
	indexer := cache.NewIndexer(cache.IndexerOptions[*corev1.ConfigMap]{})
	store := &signalingStore{
		StoreWriter: cache.NewStoreWriter(cache.StoreWriterOptions[*corev1.ConfigMap]{Store: indexer}),
		filled:      make(chan struct{}),
	}
	r, err := reflector.New(reflector.Options[*corev1.ConfigMap]{
		Name:   "configmaps",
		Source: src,
		Store:  store,
		ErrorHandler: func(err error) {
			fmt.Println("error:", err)
		},
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()

	<-store.filled
	cancel()
	<-done // Run returns once its goroutines have exited
	fmt.Println(len(indexer.List()), "objects at version", r.LastSyncResourceVersion())
	// Output:
	// 2 objects at version 3
}

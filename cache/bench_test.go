package cache

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// benchPods returns n pods spread over 100 namespaces, each with a
// "app" label shared by 10 pods.
func benchPods(n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace:       fmt.Sprintf("ns-%d", i%100),
			Name:            fmt.Sprintf("pod-%d", i),
			ResourceVersion: fmt.Sprint(i + 1),
			Labels:          map[string]string{"app": fmt.Sprintf("app-%d", i/10)},
		}}
	}
	return pods
}

func appIndex(p *corev1.Pod) ([]string, error) { return []string{p.Labels["app"]}, nil }

func benchIndexer() *Indexer[*corev1.Pod] {
	return NewIndexer(IndexerOptions[*corev1.Pod]{Indexers: Indexers[*corev1.Pod]{
		NamespaceIndex: MetaNamespaceIndexFunc[*corev1.Pod],
		"app":          appIndex,
	}})
}

func BenchmarkMetaNamespaceKey(b *testing.B) {
	p := benchPods(1)[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MetaNamespaceKey(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexerAdd adds new objects to an indexer with two indexes.
func BenchmarkIndexerAdd(b *testing.B) {
	pods := benchPods(100_000)
	s := benchIndexer()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(pods) {
			b.StopTimer()
			s = benchIndexer()
			i = 0
			b.StartTimer()
		}
		if err := s.Add(pods[i]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkIndexerUpdate updates objects of a 100k indexer with new
// versions (new pointers), index values unchanged (the common case).
func BenchmarkIndexerUpdate(b *testing.B) {
	versions := [2][]*corev1.Pod{benchPods(100_000), benchPods(100_000)}
	s := benchIndexer()
	if err := s.Replace(versions[0]); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		pods := versions[(i/100_000+1)%2]
		if err := s.Update(pods[i%len(pods)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkIndexerResync stores again the object already stored, as a
// resync does, in a 100k indexer.
func BenchmarkIndexerResync(b *testing.B) {
	pods := benchPods(100_000)
	s := benchIndexer()
	if err := s.Replace(pods); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.Update(pods[i%len(pods)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkIndexerDeleteAdd deletes an object of a 100k indexer and adds
// it back: one op is the pair.
func BenchmarkIndexerDeleteAdd(b *testing.B) {
	pods := benchPods(100_000)
	s := benchIndexer()
	if err := s.Replace(pods); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := pods[i%len(pods)]
		if err := s.Delete(p); err != nil {
			b.Fatal(err)
		}
		if err := s.Add(p); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkIndexerReplace replaces the content of an indexer with 10k
// objects; ns/op is per Replace.
func BenchmarkIndexerReplace10k(b *testing.B) {
	pods := benchPods(10_000)
	s := benchIndexer()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Replace(pods); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexerByIndex looks up the 10 objects sharing a label value in
// a 100k indexer.
func BenchmarkIndexerByIndex100k(b *testing.B) {
	s := benchIndexer()
	if err := s.Replace(benchPods(100_000)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		objs, err := s.ByIndex("app", fmt.Sprintf("app-%d", i%10_000))
		if err != nil || len(objs) != 10 {
			b.Fatalf("%d objects, %v", len(objs), err)
		}
		i++
	}
}

// BenchmarkIndexerIndexKeysNamespace100k lists the keys of one namespace
// (1,000 objects) in a 100k indexer.
func BenchmarkIndexerIndexKeysNamespace100k(b *testing.B) {
	s := benchIndexer()
	if err := s.Replace(benchPods(100_000)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		keys, err := s.IndexKeys(NamespaceIndex, fmt.Sprintf("ns-%d", i%100))
		if err != nil || len(keys) != 1000 {
			b.Fatalf("%d keys, %v", len(keys), err)
		}
		i++
	}
}

// BenchmarkIndexerGetByKey100k reads one object of a 100k indexer.
func BenchmarkIndexerGetByKey100k(b *testing.B) {
	pods := benchPods(100_000)
	keys := make([]string, len(pods))
	for i, p := range pods {
		keys[i], _ = MetaNamespaceKey(p)
	}
	s := benchIndexer()
	if err := s.Replace(pods); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok, _ := s.GetByKey(keys[i%len(keys)]); !ok {
			b.Fatal("missing")
		}
		i++
	}
}

// BenchmarkDeltaFIFOAddPop measures throughput: one op is an Add by a
// producer goroutine and the Pop that hands it to a consumer applying it to
// an indexer with two indexes, the two running concurrently, over 1,000
// distinct keys.
func BenchmarkDeltaFIFOAddPop(b *testing.B) {
	versions := [2][]*corev1.Pod{benchPods(1000), benchPods(1000)}
	known := benchIndexer()
	f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.Pod]{KnownObjects: known})
	ctx := context.Background()
	done := make(chan struct{})
	b.ReportAllocs()
	n := b.N
	go func() {
		defer close(done)
		for i := range n {
			// Alternate versions, so the consumer stores new pointers.
			if err := f.Add(versions[(i/1000)%2][i%1000]); err != nil {
				panic(err)
			}
		}
	}()
	process := func(_ string, ds Deltas[*corev1.Pod], _ bool) error {
		for _, d := range ds {
			if err := known.Update(d.Object); err != nil {
				return err
			}
		}
		return nil
	}
	popped := 0
	for popped < n {
		ds, err := f.Pop(ctx, process)
		if err != nil {
			b.Fatal(err)
		}
		popped += len(ds)
	}
	<-done
}

// BenchmarkDeltaFIFOAdd measures Add alone, into a queue of 1,000 keys that
// is drained (untimed) whenever it holds 10,000 deltas.
func BenchmarkDeltaFIFOAdd(b *testing.B) {
	pods := benchPods(1000)
	f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.Pod]{})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := f.Add(pods[i%len(pods)]); err != nil {
			b.Fatal(err)
		}
		i++
		if i%10_000 == 0 {
			b.StopTimer()
			for f.Len() > 0 {
				if _, err := f.Pop(context.Background(), func(string, Deltas[*corev1.Pod], bool) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
		}
	}
}

// BenchmarkDeltaFIFOReplace10k relists 10k objects into a DeltaFIFO whose
// KnownObjects holds them, and drains the queue; ns/op is per relist.
func BenchmarkDeltaFIFOReplace10k(b *testing.B) {
	pods := benchPods(10_000)
	known := benchIndexer()
	if err := known.Replace(pods); err != nil {
		b.Fatal(err)
	}
	f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.Pod]{KnownObjects: known})
	nop := func(string, Deltas[*corev1.Pod], bool) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Replace(pods, "2"); err != nil {
			b.Fatal(err)
		}
		for f.Len() > 0 {
			if _, err := f.Pop(context.Background(), nop); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchNamespaceNameGetter returns n pods and an indexer holding them, as
// the namespaced read its Lister uses.
func benchNamespaceNameGetter(b *testing.B, n int) ([]*corev1.Pod, interface {
	GetByNamespaceName(namespace, name string) (*corev1.Pod, bool)
}) {
	pods := benchPods(n)
	s := benchIndexer()
	if err := s.Replace(pods); err != nil {
		b.Fatal(err)
	}
	return pods, s
}

// BenchmarkIndexerGetByNamespaceName100k reads one object of a 100k
// indexer by namespace and name, as a namespaced Lister does.
func BenchmarkIndexerGetByNamespaceName100k(b *testing.B) {
	pods, g := benchNamespaceNameGetter(b, 100_000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := pods[i%len(pods)]
		if _, ok := g.GetByNamespaceName(p.Namespace, p.Name); !ok {
			b.Fatal("missing")
		}
		i++
	}
}

// BenchmarkIndexerGetByNamespaceNameParallel100k is the same read from
// every core at once (-cpu 1,2,4 shows how it scales): the read takes no
// lock, so readers do not contend.
func BenchmarkIndexerGetByNamespaceNameParallel100k(b *testing.B) {
	pods, g := benchNamespaceNameGetter(b, 100_000)
	var seed atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seed.Add(7919))
		for pb.Next() {
			p := pods[i%len(pods)]
			if _, ok := g.GetByNamespaceName(p.Namespace, p.Name); !ok {
				b.Error("missing")
				return
			}
			i++
		}
	})
}

// BenchmarkIndexerHeap100k reports the heap an indexer with a namespace
// index holds for 100k pods, beyond the pods, per object.
func BenchmarkIndexerHeap100k(b *testing.B) {
	pods := benchPods(100_000)
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := NewIndexer(IndexerOptions[*corev1.Pod]{Indexers: Indexers[*corev1.Pod]{NamespaceIndex: MetaNamespaceIndexFunc[*corev1.Pod]}})
		for _, p := range pods {
			if err := s.Add(p); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(pods)), "B/object")
		runtime.KeepAlive(s)
	}
}

// BenchmarkDeltaFIFORelistUnchanged100k is an informer's relist of
// 100,000 objects it already holds at the same versions, as a streaming
// list brings them: a relist session over a queue whose KnownObjects holds
// them, one Apply per object (one watch event each), Finish, and every key
// popped by a process function reading the indexer as the informer does;
// B/op is per relist (divide by 100,000 for a listed object's garbage, the
// million-relist-peak-view line of bench/cmd/controlplane -million).
func BenchmarkDeltaFIFORelistUnchanged100k(b *testing.B) {
	pods := benchPods(100_000)
	known := benchIndexer()
	if err := known.Replace(pods); err != nil {
		b.Fatal(err)
	}
	f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.Pod]{KnownObjects: known})
	if err := f.Add(pods[0]); err != nil { // populated: relists go through sessions
		b.Fatal(err)
	}
	ctx := context.Background()
	process := func(key string, ds Deltas[*corev1.Pod], _ bool) error {
		for range ds {
			if _, _, err := known.GetByKey(key); err != nil {
				return err
			}
		}
		return nil
	}
	drain := func() {
		for f.Len() > 0 {
			if _, err := f.Pop(ctx, process); err != nil {
				b.Fatal(err)
			}
		}
	}
	drain()
	one := make([]*corev1.Pod, 1)
	b.ReportAllocs()
	for b.Loop() {
		s, ok := f.BeginRelist()
		if !ok {
			b.Fatal("no relist session")
		}
		for _, p := range pods {
			one[0] = p
			if err := s.Apply(one); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Finish("2"); err != nil {
			b.Fatal(err)
		}
		drain()
	}
}

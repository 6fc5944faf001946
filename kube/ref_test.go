package kube

import (
	goruntime "runtime"
	"testing"
	"weak"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// refServer serves pods of two namespaces, shop and db.
func refServer(t *testing.T) *rest.Config {
	return listWatchServer(t, map[string][]runtime.Object{
		"/api/v1/namespaces/shop/pods": {pod("shop", "web-0", "8"), pod("shop", "web-1", "9")},
		"/api/v1/namespaces/db/pods":   {pod("db", "pg-0", "7")},
	})
}

func syncOrFail(t *testing.T, name string, synced bool) {
	t.Helper()
	if !synced {
		t.Fatalf("%s did not sync", name)
	}
}

// The last Release of an acquired informer stops it, waits for it, and
// drops it from the factory: nothing keeps it reachable, a new Acquire
// makes a new informer, and the factory's other informers run on.
func TestRefLastReleaseStopsAndDropsTheInformer(t *testing.T) {
	f, err := NewFactory(refServer(t), FactoryOptions{ErrorHandler: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	db, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "db"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	f.Start(ctx)

	// Acquired after Start: starts at once.
	a, err := Acquire(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "shop"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Acquire(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "shop"}})
	if err != nil {
		t.Fatal(err)
	}
	inf := a.Informer()
	if b.Informer() != inf || a.Key() != b.Key() {
		t.Fatal("two references to one key got different informers")
	}
	syncOrFail(t, "acquired informer", inf.WaitForCacheSync(ctx))
	if n := len(inf.Cache().List()); n != 2 {
		t.Fatalf("acquired informer cached %d pods, want 2", n)
	}

	a.Release()
	a.Release() // counted once
	if inf.IsStopped() {
		t.Fatal("informer stopped while a reference is held")
	}
	if synced := f.WaitForCacheSync(ctx); len(synced) != 2 {
		t.Fatalf("factory has %v, want both informers", synced)
	}
	b.Release()
	if !inf.IsStopped() {
		t.Fatal("last Release returned before the informer stopped")
	}
	if synced := f.WaitForCacheSync(ctx); len(synced) != 1 || !synced[Key{Resource: b.Key().Resource, Selection: Selection{Namespace: "db"}, Type: b.Key().Type}] {
		t.Fatalf("factory after the last Release: %v, want only db's informer", synced)
	}
	if db.IsStopped() || !db.HasSynced() {
		t.Fatalf("other informer: stopped %v, synced %v", db.IsStopped(), db.HasSynced())
	}

	// Nothing the factory holds keeps the released informer alive.
	gone := weak.Make(inf)
	inf, a, b = nil, nil, nil
	goruntime.GC()
	if gone.Value() != nil {
		t.Error("released informer still reachable after GC")
	}

	again, err := Acquire(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "shop"}})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Release()
	if again.Informer() == gone.Value() {
		t.Fatal("Acquire after the last Release returned the released informer")
	}
	syncOrFail(t, "re-acquired informer", again.Informer().WaitForCacheSync(ctx))
}

// An informer acquired before Start runs from Start; one that someone got
// from Informer (held until Shutdown) outlives every Release.
func TestRefBeforeStartAndPinnedInformers(t *testing.T) {
	f, err := NewFactory(refServer(t), FactoryOptions{ErrorHandler: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	early, err := Acquire(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "shop"}})
	if err != nil {
		t.Fatal(err)
	}
	dropped, err := Acquire(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "db"}})
	if err != nil {
		t.Fatal(err)
	}
	dropped.Release() // never started: just forgotten
	pinned, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "shop"}})
	if err != nil {
		t.Fatal(err)
	}
	if pinned != early.Informer() {
		t.Fatal("Informer and Acquire of one key returned different informers")
	}
	ctx := t.Context()
	f.Start(ctx)
	synced := f.WaitForCacheSync(ctx)
	if len(synced) != 1 || !synced[early.Key()] {
		t.Fatalf("synced %v, want only the shop informer", synced)
	}
	if dropped.Informer().HasSynced() || dropped.Informer().IsStopped() {
		t.Error("an informer released before Start was started")
	}
	early.Release()
	if pinned.IsStopped() {
		t.Fatal("Release stopped an informer handed out by Informer")
	}
}

// Refs released after Shutdown, or from many goroutines at once, neither
// block nor panic.
func TestRefReleaseAfterShutdownAndConcurrently(t *testing.T) {
	f, err := NewFactory(refServer(t), FactoryOptions{ErrorHandler: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	f.Start(ctx)
	refs := make(chan *Ref[*corev1.Pod], 8)
	for range cap(refs) {
		r, err := Acquire(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "shop"}})
		if err != nil {
			t.Fatal(err)
		}
		refs <- r
	}
	close(refs)
	inf := (<-refs).Informer() // one reference is never released
	done := make(chan struct{})
	for r := range refs {
		go func() {
			r.Release()
			done <- struct{}{}
		}()
	}
	for range cap(refs) - 1 {
		<-done
	}
	if inf.IsStopped() {
		t.Fatal("informer stopped with a reference held")
	}
	f.Shutdown()
	if !inf.IsStopped() {
		t.Fatal("Shutdown left an acquired informer running")
	}
}

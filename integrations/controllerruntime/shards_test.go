package controllerruntime

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kinformer/kinformer/listwatch"
	lwfake "github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shard/replicas"
)

// Bad shard settings are refused when the cache is made, each with an
// error naming what is wrong.
func TestShardsRefuseBadSettings(t *testing.T) {
	ok := Shard{Replicas: replicas.GroupOptions{Name: "cms", Namespace: "leases"}}
	base := crcache.Options{Scheme: clientgoscheme.Scheme}
	for _, tc := range []struct {
		name   string
		shards map[client.Object]Shard
		opts   func(o crcache.Options) crcache.Options
		want   string
	}{
		{"no name", map[client.Object]Shard{&corev1.ConfigMap{}: {Replicas: replicas.GroupOptions{Namespace: "l"}}}, nil, "no Replicas.Name"},
		{"no namespace", map[client.Object]Shard{&corev1.ConfigMap{}: {Replicas: replicas.GroupOptions{Name: "g"}}}, nil, "no Replicas.Namespace"},
		{"one group for two types", map[client.Object]Shard{&corev1.ConfigMap{}: ok, &corev1.Pod{}: ok}, nil, "name the same group"},
		{"bad field", map[client.Object]Shard{&corev1.ConfigMap{}: {Replicas: ok.Replicas, Field: "spec.nodeName"}}, nil, "spec.nodeName"},
		{"default namespaces", map[client.Object]Shard{&corev1.ConfigMap{}: ok}, func(o crcache.Options) crcache.Options {
			o.DefaultNamespaces = map[string]crcache.Config{"a": {}}
			return o
		}, "spans every namespace"},
		{"by object namespaces", map[client.Object]Shard{&corev1.ConfigMap{}: ok}, func(o crcache.Options) crcache.Options {
			o.ByObject = map[client.Object]crcache.ByObject{&corev1.ConfigMap{}: {Namespaces: map[string]crcache.Config{"a": {}}}}
			return o
		}, "spans every namespace"},
		{"new informer", map[client.Object]Shard{&corev1.ConfigMap{}: ok}, func(o crcache.Options) crcache.Options {
			o.NewInformer = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
				return nil
			}
			return o
		}, "NewInformer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			if tc.opts != nil {
				o = tc.opts(o)
			}
			x, err := newExtensions(Options{Shards: tc.shards})
			if err != nil {
				t.Fatal(err)
			}
			err = x.resolveShards(o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	x, err := newExtensions(Options{Shards: map[client.Object]Shard{&corev1.ConfigMap{}: ok}})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.resolveShards(base); err != nil {
		t.Fatalf("good settings: %v", err)
	}
	if x.shards[entryKey{corev1.SchemeGroupVersion.WithKind("ConfigMap"), structured}] == nil {
		t.Fatalf("the config maps' informer is not sharded: %v", x.shards)
	}
}

// shardReplica is one replica's sharded informer of config maps, with a
// handler that notes what it is told.
type shardReplica struct {
	e      *shardedEntry[*corev1.ConfigMap]
	reg    toolscache.ResourceEventHandlerRegistration
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	added   map[string]bool // name: isInInitialList of its last add
	deleted []string
}

func startShardReplica(t *testing.T, id string, src *lwfake.Source[*corev1.ConfigMap], leases *fake.Clientset) *shardReplica {
	t.Helper()
	cfg := entryConfig{
		gvk:    corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		resync: time.Hour,
		ext:    &extensions{},
		shard: &shardSpec{opts: Shard{Field: shard.UID, Replicas: replicas.GroupOptions{
			Name: "cms", Namespace: "leases", Identity: id, Client: leases.CoordinationV1(), Slots: 8,
			LeaseDuration: 4 * time.Second, RenewPeriod: 500 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler),
		}}},
	}
	e, err := newShardedEntry(cfg, func(set shard.Set) (listwatch.ListerWatcher[*corev1.ConfigMap], error) {
		return shard.Filter[*corev1.ConfigMap](src, set), nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &shardReplica{e: e, added: map[string]bool{}, done: make(chan struct{})}
	if err := e.informer().AddIndexers(toolscache.Indexers{"first": func(obj any) ([]string, error) {
		return []string{obj.(*corev1.ConfigMap).Name[:1]}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		e.run(ctx)
	}()
	r.reg, err = e.informer().AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			r.mu.Lock()
			r.added[obj.(*corev1.ConfigMap).Name] = initial
			r.mu.Unlock()
		},
		DeleteFunc: func(obj any) {
			r.mu.Lock()
			r.deleted = append(r.deleted, obj.(*corev1.ConfigMap).Name)
			r.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *shardReplica) stop() {
	r.cancel()
	<-r.done
}

func (r *shardReplica) names() []string {
	var out []string
	for _, o := range r.e.list("") {
		out = append(out, o.GetName())
	}
	slices.Sort(out)
	return out
}

func (r *shardReplica) told() (added map[string]bool, deleted []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.added), slices.Clone(r.deleted)
}

// Two replicas share the config maps: each caches a part, together all,
// none twice; each handler is told of its own part as initial adds; reads
// of the other part find nothing. When one leaves, the other acquires its
// part (adds again, no delete is told to anyone).
func TestShardedInformersShareAndHandOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, err := lwfake.New(lwfake.Options[*corev1.ConfigMap]{})
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		for i := range 40 {
			name := fmt.Sprintf("cm%02d", i)
			all = append(all, name)
			if _, err := src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
				UID: types.UID(fmt.Sprintf("uid-%d-a1b2", i))}}); err != nil {
				t.Fatal(err)
			}
		}
		leases := fake.NewClientset()
		a, b := startShardReplica(t, "a", src, leases), startShardReplica(t, "b", src, leases)
		defer a.stop()
		for _, r := range []*shardReplica{a, b} {
			if !r.e.waitSynced(t.Context()) {
				t.Fatal("a replica did not sync")
			}
		}
		// Synced is the first convergence of each alone: wait until both
		// see the other and own exactly their split.
		deadline := time.Now().Add(time.Minute)
		for {
			sa, sb := a.e.group.Status(), b.e.group.Status()
			if len(sa.Members) == 2 && len(sb.Members) == 2 && slices.Equal(sa.Owned, sa.Assigned) && slices.Equal(sb.Owned, sb.Assigned) &&
				len(a.names())+len(b.names()) == len(all) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no split: a %+v, b %+v", sa, sb)
			}
			time.Sleep(100 * time.Millisecond)
		}
		synctest.Wait()
		na, nb := a.names(), b.names()
		if len(na) == 0 || len(nb) == 0 {
			t.Fatalf("one replica caches nothing: a %v, b %v", na, nb)
		}
		if got := slices.Sorted(slices.Values(append(slices.Clone(na), nb...))); !slices.Equal(got, all) {
			t.Fatalf("a and b cache %v, want each of %v once", got, all)
		}
		for _, r := range []*shardReplica{a, b} {
			if !r.reg.HasSynced() {
				t.Error("a registration is not synced once its replica owns its share")
			}
			added, _ := r.told()
			for _, n := range r.names() {
				if !added[n] {
					t.Errorf("%s is cached and its handler got no initial add (%v)", n, added)
				}
			}
		}
		if _, ok := a.e.get("ns", nb[0]); ok {
			t.Errorf("a reads %s, which b owns", nb[0])
		}
		if objs, err := a.e.byIndex("first", "c"); err != nil || len(objs) != len(na) {
			t.Errorf("a's index: %d objects, %v; want %d", len(objs), err, len(na))
		}

		b.stop()
		deadline = time.Now().Add(time.Minute)
		for !slices.Equal(a.names(), all) {
			if time.Now().After(deadline) {
				t.Fatalf("a did not take b's share: it caches %v", a.names())
			}
			time.Sleep(100 * time.Millisecond)
		}
		synctest.Wait()
		added, deleted := a.told()
		if len(added) != len(all) || len(deleted) != 0 {
			t.Errorf("a was told of %d adds and deletes %v, want %d adds and none", len(added), deleted, len(all))
		}
		for _, n := range nb {
			if !added[n] {
				t.Errorf("%s moved to a without an initial add", n)
			}
		}
		if _, deleted := b.told(); len(deleted) != 0 {
			t.Errorf("b was told its released objects were deleted: %v", deleted)
		}
		if !b.e.informer().IsStopped() {
			t.Error("b's informer is not stopped after its run returned")
		}
		if err := b.e.informer().AddIndexers(toolscache.Indexers{"late": func(any) ([]string, error) { return nil, nil }}); err == nil {
			t.Error("an index added after the start was accepted")
		}
	})
}

// A handler added once the replica owns its share has its checker's
// channel closed once it has been handed that share; a removed handler is
// told nothing more and leaves the replica's informer (removing it twice
// is no error); a handle of another sharded informer is refused and keeps
// working.
func TestShardedRegistrationSyncsAndRemoves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, err := lwfake.New(lwfake.Options[*corev1.ConfigMap]{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			if _, err := src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("cm%02d", i),
				UID: types.UID(fmt.Sprintf("uid-%d-c3d4", i))}}); err != nil {
				t.Fatal(err)
			}
		}
		a := startShardReplica(t, "a", src, fake.NewClientset())
		defer a.stop()
		other := startShardReplica(t, "o", src, fake.NewClientset()) // a group of its own
		defer other.stop()
		for _, r := range []*shardReplica{a, other} {
			if !r.e.waitSynced(t.Context()) {
				t.Fatal("a replica did not sync")
			}
		}
		var mu sync.Mutex
		var late []string
		reg, err := a.e.informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			mu.Lock()
			late = append(late, obj.(*corev1.ConfigMap).Name)
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		<-reg.HasSyncedChecker().Done() // closes by itself: synctest fails the test on a deadlock
		mu.Lock()
		handed := len(late)
		mu.Unlock()
		if handed != 20 || !reg.HasSynced() {
			t.Fatalf("synced with %d of 20 objects handed (HasSynced %v)", handed, reg.HasSynced())
		}

		if err := a.e.informer().RemoveEventHandler(other.reg); err == nil {
			t.Error("a's informer removed a handler of another informer")
		}
		if err := a.e.informer().RemoveEventHandler(reg); err != nil {
			t.Fatalf("RemoveEventHandler: %v", err)
		}
		if err := a.e.informer().RemoveEventHandler(reg); err != nil {
			t.Errorf("RemoveEventHandler twice: %v", err)
		}
		if err := a.e.inf.RemoveHandler(reg.(*shardRegistration[*corev1.ConfigMap]).rr); err == nil {
			t.Error("the removed handler is still registered with the replica's informer")
		}
		if _, err := src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "late", UID: "uid-late-e5f6"}}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		mu.Lock()
		after := len(late)
		mu.Unlock()
		if after != 20 {
			t.Errorf("the removed handler was told %d more adds", after-20)
		}
		for _, r := range []*shardReplica{a, other} { // a's first handler, other's
			added, _ := r.told()
			if initial, ok := added["late"]; !ok || initial || len(added) != 21 {
				t.Errorf("a handler that stays was told %d adds (late: %v, initial %v), want 21, late not initial", len(added), ok, initial)
			}
		}
	})
}

package testenv

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// startNoWatchCache starts a second control plane with the watch cache off, tied to a context
// the test cancels at the end, and returns it with that cancel function.
func startNoWatchCache(t *testing.T) (*Env, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	env, err := Start(ctx, Options{Binaries: shared.bins, DisableWatchCache: true})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	dumpLogsOnFailure(t, env)
	t.Cleanup(func() {
		cancel()
		env.Stop()
	})
	return env, cancel
}

func TestCompactionWithoutWatchCacheMakesOldVersionsGone(t *testing.T) {
	env, _ := startNoWatchCache(t)
	ctx := testContext(t)
	const ns = "compaction"
	if err := env.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if err := env.CreateConfigMaps(ctx, ns, 10, BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	old, err := cms.List(ctx, metav1.ListOptions{Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	if old.Continue == "" {
		t.Fatal("a list of 10 with limit 4 returned no continue token")
	}
	createConfigMap(ctx, t, env.Clientset(), ns, "later")

	rev, err := env.CompactEtcd(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if oldRV, _ := strconv.ParseInt(old.ResourceVersion, 10, 64); rev <= oldRV {
		t.Fatalf("compacted at %d, not after the list's version %d", rev, oldRV)
	}

	_, err = cms.List(ctx, metav1.ListOptions{
		ResourceVersion: old.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact,
	})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("exact list at a compacted version: %v, want 410", err)
	}
	_, err = cms.List(ctx, metav1.ListOptions{Limit: 4, Continue: old.Continue})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("continue token from before the compaction: %v, want 410", err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: old.ResourceVersion})
	if err != nil {
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Errorf("watch from a compacted version: %v, want 410", err)
		}
	} else {
		ev := nextEvent(ctx, t, w)
		w.Stop()
		if statusCode(ev) != http.StatusGone {
			t.Errorf("first event of a watch from a compacted version = %s %v, want ERROR 410", ev.Type, ev.Object)
		}
	}

	// The current version is still good: list and watch from it.
	now, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(now.Items) != 11 {
		t.Errorf("listed %d config maps after compaction, want 11", len(now.Items))
	}
	w, err = cms.Watch(ctx, metav1.ListOptions{ResourceVersion: now.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	createConfigMap(ctx, t, env.Clientset(), ns, "after-compaction")
	if ev := nextEvent(ctx, t, w); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "after-compaction" {
		t.Errorf("watch from the current version: %s %v, want ADDED after-compaction", ev.Type, ev.Object)
	}
}

func TestCompactionWithWatchCacheExpiresListsButNotWatches(t *testing.T) {
	dumpLogsOnFailure(t, shared)
	ctx := testContext(t)
	const ns = "compaction-cached"
	if err := shared.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if err := shared.CreateConfigMaps(ctx, ns, 5, BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := shared.Clientset().CoreV1().ConfigMaps(ns)
	old, err := cms.List(ctx, metav1.ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	createConfigMap(ctx, t, shared.Clientset(), ns, "later")
	if _, err := shared.CompactEtcd(ctx); err != nil {
		t.Fatal(err)
	}

	// Served from the watch cache's event history, which compaction does not touch.
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: old.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(ctx, t, w)
	w.Stop()
	if cm, ok := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Added || !ok || cm.Name != "later" {
		t.Errorf("cached watch from before the compaction: %s %v, want ADDED later", ev.Type, ev.Object)
	}

	// Exact lists and continue tokens are served from cache snapshots until the apiserver
	// sees the compaction (it polls every 15 s), then they are gone.
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		_, errExact := cms.List(ctx, metav1.ListOptions{
			ResourceVersion: old.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact,
		})
		_, errContinue := cms.List(ctx, metav1.ListOptions{Limit: 2, Continue: old.Continue})
		if apierrors.IsResourceExpired(errExact) && apierrors.IsResourceExpired(errContinue) {
			return
		}
		for _, err := range []error{errExact, errContinue} {
			if err != nil && !apierrors.IsResourceExpired(err) {
				t.Fatalf("list at a compacted version: %v, want success or 410", err)
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("lists at a compacted version still served (exact: %v, continue: %v): %v",
				errExact, errContinue, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

func TestCancellingStartContextStopsEverything(t *testing.T) {
	env, cancel := startNoWatchCache(t)
	ctx := testContext(t)
	env.mu.Lock()
	pids := []int{env.etcd.cmd.Process.Pid, env.apiserver.cmd.Process.Pid}
	env.mu.Unlock()
	dir := env.dir

	cancel()
	if err := env.Stop(); err != nil { // Waits for the stop the cancellation began.
		t.Fatalf("Stop after cancellation: %v", err)
	}
	if err := env.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after Stop (kill 0: %v)", pid, err)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory %s still exists after Stop (stat: %v)", dir, err)
	}
	if err := env.StartAPIServer(ctx); !errors.Is(err, ErrStopped) {
		t.Errorf("StartAPIServer after Stop: %v, want ErrStopped", err)
	}
	if _, err := env.CompactEtcd(ctx); !errors.Is(err, ErrStopped) {
		t.Errorf("CompactEtcd after Stop: %v, want ErrStopped", err)
	}
}

func TestStartRetriesWhenAPortIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	calls := 0
	pickPorts = func(n int) ([]int, error) {
		calls++
		ports, err := freePorts(n)
		if calls == 1 && err == nil {
			ports[0] = taken.Addr().(*net.TCPAddr).Port // etcd's client port
		}
		return ports, err
	}
	t.Cleanup(func() { pickPorts = freePorts })

	env, err := Start(t.Context(), Options{Binaries: shared.bins})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	if calls != 2 {
		t.Errorf("ports picked %d times, want 2 (one conflict, one success)", calls)
	}
	if _, err := env.Clientset().Discovery().ServerVersion(); err != nil {
		t.Fatal(err)
	}
}

package informer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/checkpoint"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/reflector"
)

// ckptRun runs one informer over src with checkpoints at path until stop
// is called; rec, when set, is its handler.
type ckptRun struct {
	inf    *cmInformer
	errs   *errSink
	cancel context.CancelFunc
	done   chan error
}

func startCheckpointed(t *testing.T, src *fake.Source[*corev1.ConfigMap], path string, opts CheckpointOptions[*corev1.ConfigMap], rec Handler[*corev1.ConfigMap]) *ckptRun {
	t.Helper()
	return startCheckpointedWith(t, src, path, opts, rec, nil)
}

// testCluster is the cluster identity of the checkpoints of these tests.
const testCluster = "cluster-a"

func startCheckpointedWith(t *testing.T, src *fake.Source[*corev1.ConfigMap], path string, opts CheckpointOptions[*corev1.ConfigMap],
	rec Handler[*corev1.ConfigMap], provider metrics.Provider) *ckptRun {
	t.Helper()
	opts.Path = path
	if opts.Identity.Resource == "" {
		opts.Identity.Resource = "configmaps in ns"
	}
	if opts.Identity.Cluster == "" && opts.Cluster == nil {
		opts.Identity.Cluster = testCluster
	}
	r := &ckptRun{errs: &errSink{}, done: make(chan error, 1)}
	inf, err := NewShared(Options[*corev1.ConfigMap]{Source: src, ErrorHandler: r.errs.add, Checkpoint: opts, Metrics: provider})
	if err != nil {
		t.Fatal(err)
	}
	if rec != nil {
		if _, err := inf.AddHandler(rec, HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r.inf = inf
	ctx, cancel := context.WithCancel(t.Context())
	r.cancel = cancel
	go func() { r.done <- inf.Run(ctx) }()
	return r
}

func (r *ckptRun) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Fatal(err)
	}
}

// seeded returns a fake source holding o0..o(n-1).
func seeded(t *testing.T, n int) *fake.Source[*corev1.ConfigMap] {
	t.Helper()
	src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := src.Create(cm(fmt.Sprintf("o%d", i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// whileDown changes src as if while the process was stopped: o0 updated,
// o1 deleted, "new" created.
func whileDown(t *testing.T, src *fake.Source[*corev1.ConfigMap]) {
	t.Helper()
	o, _ := src.Get("ns", "o0")
	o.Labels = map[string]string{"changed": "yes"}
	if _, err := src.Update(o); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Delete("ns", "o1"); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Create(cm("new", 0)); err != nil {
		t.Fatal(err)
	}
}

// writeFirst runs a first informer until synced and stops it, which writes
// its checkpoint.
func writeFirst(t *testing.T, src *fake.Source[*corev1.ConfigMap], path string) {
	t.Helper()
	first := startCheckpointed(t, src, path, CheckpointOptions[*corev1.ConfigMap]{}, nil)
	if !first.inf.WaitForCacheSync(t.Context()) {
		t.Fatal("first run did not sync")
	}
	synctest.Wait()
	first.stop(t)
	if errs := first.errs.all(); len(errs) != 0 {
		t.Fatalf("first run: %v", errs)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no checkpoint after the first run: %v", err)
	}
}

// A restart from a checkpoint lists nothing: the cache is filled from the
// file (handlers get initial adds), the server confirms the version, and
// what changed while the process was down arrives as ordinary events.
func TestRestartFromCheckpointResumesTheWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := seeded(t, 20)
		path := filepath.Join(t.TempDir(), "cms.ckpt")
		writeFirst(t, src, path)
		listsBefore := len(src.ListCalls())
		whileDown(t, src)

		rec := newViewRecorder[*corev1.ConfigMap]()
		second := startCheckpointed(t, src, path, CheckpointOptions[*corev1.ConfigMap]{}, rec)
		defer second.stop(t)
		if !second.inf.WaitForCacheSync(t.Context()) {
			t.Fatal("not synced")
		}
		synctest.Wait()
		if got, want := versionsOf(second.inf.Cache().List()), versionsOf(src.Objects()); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("cache %v, source %v", got, want)
		}
		if got, want := rec.versions(), versionsOf(src.Objects()); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("handler's view %v, source %v", got, want)
		}
		lists := src.ListCalls()[listsBefore:]
		if len(lists) != 1 || lists[0].ResourceVersionMatch != listwatch.MatchExact || lists[0].Limit != 1 {
			t.Fatalf("lists after the restart: %+v, want only the one-object confirmation", lists)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if rec.initial != 20 || rec.adds != 21 || rec.updates != 1 || rec.deletes != 1 || rec.unknown != 0 || len(rec.errs) != 0 {
			t.Fatalf("handler saw %d initial adds, %d adds, %d updates, %d deletes (%d unknown), errors %v",
				rec.initial, rec.adds, rec.updates, rec.deletes, rec.unknown, rec.errs)
		}
		if errs := second.errs.all(); len(errs) != 0 {
			t.Fatalf("errors: %v", errs)
		}
	})
}

// restartExpired writes a checkpoint of 20 objects, changes the source
// (whileDown) and compacts its history past the checkpoint, then starts a
// second informer with opts, rec and provider and waits until it has
// synced. The caller stops it.
func restartExpired(t *testing.T, opts CheckpointOptions[*corev1.ConfigMap], rec Handler[*corev1.ConfigMap],
	provider metrics.Provider) (*fake.Source[*corev1.ConfigMap], *ckptRun) {
	t.Helper()
	src := seeded(t, 20)
	path := filepath.Join(t.TempDir(), "cms.ckpt")
	writeFirst(t, src, path)
	whileDown(t, src)
	src.Compact()
	second := startCheckpointedWith(t, src, path, opts, rec, provider)
	if !second.inf.WaitForCacheSync(t.Context()) {
		second.stop(t)
		t.Fatal("not synced")
	}
	return src, second
}

// A checkpoint older than the server's history (410) leads to a relist
// that delivers only the real differences: no update for the objects that
// did not change.
func TestRestartFromExpiredCheckpointDeliversOnlyDifferences(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newViewRecorder[*corev1.ConfigMap]()
		src, second := restartExpired(t, CheckpointOptions[*corev1.ConfigMap]{}, rec, nil)
		defer second.stop(t)
		// Synced means the relist's differences are applied, not just the
		// checkpoint's objects.
		if got, want := versionsOf(second.inf.Cache().List()), versionsOf(src.Objects()); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("synced with cache %v, source %v", got, want)
		}
		synctest.Wait()
		if got, want := rec.versions(), versionsOf(src.Objects()); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("handler's view %v, source %v", got, want)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if rec.initial != 20 || rec.adds != 21 || rec.updates != 1 || rec.deletes != 1 || rec.unknown != 1 || len(rec.errs) != 0 {
			t.Fatalf("handler saw %d initial adds, %d adds, %d updates, %d deletes (%d unknown), errors %v",
				rec.initial, rec.adds, rec.updates, rec.deletes, rec.unknown, rec.errs)
		}
		// Only the 3 differences count towards the next checkpoint: the
		// objects the relist found unchanged change nothing to save.
		if n := checkpointerOf(second.inf).changes.Load(); n != 3 {
			t.Fatalf("%d changes counted for the next checkpoint, want 3", n)
		}
	})
}

// With SkipExpired, an expired checkpoint's objects are never read: the
// informer lists as a cold start does (handlers get the server's objects
// as initial adds, nothing of the file), and every one of them counts
// towards the next checkpoint, which replaces the expired one.
func TestRestartFromExpiredCheckpointWithSkipExpiredListsCold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newViewRecorder[*corev1.ConfigMap]()
		prov := newMetricsRecorder()
		src, second := restartExpired(t, CheckpointOptions[*corev1.ConfigMap]{SkipExpired: true}, rec, prov)
		defer second.stop(t)
		synctest.Wait()
		if got, want := versionsOf(second.inf.Cache().List()), versionsOf(src.Objects()); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("cache %v, source %v", got, want)
		}
		rec.mu.Lock()
		if rec.initial != 20 || rec.adds != 20 || rec.updates != 0 || rec.deletes != 0 || len(rec.errs) != 0 {
			t.Errorf("handler saw %d initial adds, %d adds, %d updates, %d deletes, errors %v; want the server's 20 objects as initial adds only",
				rec.initial, rec.adds, rec.updates, rec.deletes, rec.errs)
		}
		rec.mu.Unlock()
		name := second.inf.Name()
		if n, v := prov.get("informer " + name + "/ckpt-objects"); n != 0 || v != 0 {
			t.Errorf("loaded objects set %d times (%v): the expired file was read", n, v)
		}
		if errs := second.errs.all(); len(errs) != 1 || !errors.Is(errs[0], listwatch.ErrExpired) {
			t.Errorf("errors %v, want the expired version reported once", errs)
		}
		if n := checkpointerOf(second.inf).changes.Load(); n != 20 {
			t.Fatalf("%d changes counted for the next checkpoint, want the 20 listed", n)
		}
	})
}

// Nothing of a checkpoint is served before the server confirms its
// version: while the server does not answer, the cache is empty and the
// informer not synced.
func TestCheckpointedInformerSyncsOnlyWhenTheServerConfirms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := seeded(t, 5)
		path := filepath.Join(t.TempDir(), "cms.ckpt")
		writeFirst(t, src, path)
		src.RefuseFor(time.Minute)
		second := startCheckpointed(t, src, path, CheckpointOptions[*corev1.ConfigMap]{}, nil)
		defer second.stop(t)
		synctest.Wait()
		if n := len(second.inf.Cache().List()); n != 0 || second.inf.HasSynced() {
			t.Fatalf("server refusing: %d cached, synced %v; want nothing served, not synced", n, second.inf.HasSynced())
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if !second.inf.HasSynced() || len(second.inf.Cache().List()) != 5 {
			t.Fatal("not synced once the server answers")
		}
	})
}

// A checkpoint that fails a check is reported, naming why, and ignored:
// the informer lists as if there were none.
func TestBadCheckpointIsReportedAndIgnored(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spoil  func(t *testing.T, path string)
		target error
	}{
		{"truncated", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b[:len(b)/2], 0o600)
		}, checkpoint.ErrCorrupt},
		{"bit flipped", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			b[len(b)/2] ^= 1
			os.WriteFile(path, b, 0o600)
		}, checkpoint.ErrCorrupt},
		{"another resource", func(t *testing.T, path string) {
			other := checkpoint.Identity{Cluster: testCluster, Resource: "secrets in ns", Type: checkpoint.TypeName[*corev1.ConfigMap](), Encoding: "protobuf"}
			codec, _ := checkpoint.DefaultCodec[*corev1.ConfigMap]()
			if err := checkpoint.Write(path, other, codec, checkpoint.Snapshot[*corev1.ConfigMap]{ResourceVersion: "1"}); err != nil {
				t.Fatal(err)
			}
		}, checkpoint.ErrMismatch},
		{"another cluster", func(t *testing.T, path string) {
			other := checkpoint.Identity{Cluster: "cluster-b", Resource: "configmaps in ns", Type: checkpoint.TypeName[*corev1.ConfigMap](), Encoding: "protobuf"}
			codec, _ := checkpoint.DefaultCodec[*corev1.ConfigMap]()
			if err := checkpoint.Write(path, other, codec, checkpoint.Snapshot[*corev1.ConfigMap]{ResourceVersion: "1", Items: []*corev1.ConfigMap{cm("ghost", 0)}}); err != nil {
				t.Fatal(err)
			}
		}, checkpoint.ErrOtherCluster},
		{"a FIFO", func(t *testing.T, path string) {
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skipf("no FIFOs: %v", err)
			}
		}, checkpoint.ErrNotRegular},
		{"a directory", func(t *testing.T, path string) {
			os.Remove(path)
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, checkpoint.ErrNotRegular},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := seeded(t, 5)
				path := filepath.Join(t.TempDir(), "cms.ckpt")
				writeFirst(t, src, path)
				tc.spoil(t, path)
				listsBefore := len(src.ListCalls())
				second := startCheckpointed(t, src, path, CheckpointOptions[*corev1.ConfigMap]{}, nil)
				defer second.stop(t)
				if !second.inf.WaitForCacheSync(t.Context()) || len(second.inf.Cache().List()) != 5 || second.inf.Progress().Objects != 5 {
					t.Fatal("cold start did not sync")
				}
				errs := second.errs.all()
				if len(errs) != 1 || !errors.Is(errs[0], tc.target) {
					t.Fatalf("errors %v, want one matching %v", errs, tc.target)
				}
				for _, l := range src.ListCalls()[listsBefore:] {
					if l.ResourceVersionMatch == listwatch.MatchExact {
						t.Fatalf("list %+v: the ignored checkpoint's version was asked for", l)
					}
				}
			})
		})
	}
}

// Checkpoints are written while running: after Changes changes, and
// every Interval when anything changed.
func TestCheckpointsAreWrittenByChangesAndByTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := seeded(t, 3)
		path := filepath.Join(t.TempDir(), "cms.ckpt")
		codec, _ := checkpoint.DefaultCodec[*corev1.ConfigMap]()
		id := checkpoint.Identity{Cluster: testCluster, Resource: "configmaps in ns", Type: checkpoint.TypeName[*corev1.ConfigMap](), Encoding: codec.Name}
		savedAt := func() string {
			snap, err := checkpoint.Read(path, id, codec)
			if err != nil {
				return "none: " + err.Error()
			}
			return snap.ResourceVersion
		}
		r := startCheckpointed(t, src, path, CheckpointOptions[*corev1.ConfigMap]{Changes: 5, Interval: time.Hour}, nil)
		defer r.stop(t)
		r.inf.WaitForCacheSync(t.Context())
		synctest.Wait()
		if got := savedAt(); got != "none: checkpoint: open "+path+": no such file or directory" {
			t.Fatalf("checkpoint after the initial list (3 changes of 5, interval not over): %s", got)
		}
		for i := range 2 {
			if _, err := src.Create(cm(fmt.Sprintf("n%d", i), 0)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2 * time.Second) // a retry, if the queue was not empty at the fifth change
		synctest.Wait()
		if got := savedAt(); got != src.ResourceVersion() {
			t.Fatalf("checkpoint at %s after 5 changes, source at %s", got, src.ResourceVersion())
		}
		if _, err := src.Create(cm("late", 0)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := savedAt(); got == src.ResourceVersion() {
			t.Fatal("checkpoint written after 1 change of 5 before the interval")
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := savedAt(); got != src.ResourceVersion() {
			t.Fatalf("checkpoint at %s after the interval, source at %s", got, src.ResourceVersion())
		}
	})
}

// A checkpoint of a server that is behind its version (another cluster
// the identity cannot tell apart, or this one restored from a backup) is
// refused unseen: neither the cache nor a handler ever holds its objects,
// which are not even read.
func TestCheckpointOfAServerBehindIsRefusedUnseen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := seeded(t, 20)
		path := filepath.Join(t.TempDir(), "cms.ckpt")
		writeFirst(t, first, path)

		restored := seeded(t, 3) // at version 3, the checkpoint at 20
		rec := newViewRecorder[*corev1.ConfigMap]()
		prov := newMetricsRecorder()
		second := startCheckpointedWith(t, restored, path, CheckpointOptions[*corev1.ConfigMap]{}, rec, prov)
		defer second.stop(t)
		if !second.inf.WaitForCacheSync(t.Context()) {
			t.Fatal("not synced")
		}
		synctest.Wait()
		if got, want := versionsOf(second.inf.Cache().List()), versionsOf(restored.Objects()); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("cache %v, source %v", got, want)
		}
		rec.mu.Lock()
		if rec.adds != 3 || rec.deletes != 0 || rec.updates != 0 {
			t.Errorf("handler saw %d adds, %d updates, %d deletes; want the server's 3 adds only", rec.adds, rec.updates, rec.deletes)
		}
		rec.mu.Unlock()
		errs := second.errs.all()
		if len(errs) != 1 || !errors.Is(errs[0], reflector.ErrResumeRefused) {
			t.Fatalf("errors %v, want one ErrResumeRefused", errs)
		}
		name := second.inf.Name()
		if n, _ := prov.get("informer " + name + "/ckpt-refused-" + metrics.CheckpointRefusedServerBehind); n != 1 {
			t.Errorf("refusal counted %d times", n)
		}
		// Only the header was read: the server answered before the
		// objects were, and they never are.
		if _, v := prov.get("informer " + name + "/ckpt-objects"); v != 0 {
			t.Errorf("loaded objects %v, want none read", v)
		}
	})
}

// The cluster comes from the server when Identity leaves it empty: asked
// again while the server does not answer, and a checkpoint of another
// cluster is refused; a server that cannot say (forbidden) gets a cold
// start, counted as "no-cluster", and no checkpoint written.
func TestCheckpointClusterIsAskedOfTheServer(t *testing.T) {
	t.Run("other cluster", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := seeded(t, 4)
			path := filepath.Join(t.TempDir(), "cms.ckpt")
			writeFirst(t, src, path) // written for testCluster
			var asked atomic.Int32
			cluster := func(context.Context) (string, error) {
				if asked.Add(1) < 3 {
					return "", fmt.Errorf("get kube-system: %w", listwatch.ErrUnavailable)
				}
				return "cluster-b", nil
			}
			prov := newMetricsRecorder()
			second := startCheckpointedWith(t, src, path, CheckpointOptions[*corev1.ConfigMap]{Cluster: cluster}, nil, prov)
			if !second.inf.WaitForCacheSync(t.Context()) || len(second.inf.Cache().List()) != 4 {
				t.Fatal("cold start did not sync")
			}
			synctest.Wait()
			second.stop(t)
			if asked.Load() != 3 {
				t.Errorf("cluster asked %d times, want 3 (twice unavailable)", asked.Load())
			}
			var refused []error
			for _, err := range second.errs.all() {
				if errors.Is(err, checkpoint.ErrOtherCluster) {
					refused = append(refused, err)
				}
			}
			if len(refused) != 1 || !strings.Contains(refused[0].Error(), "cluster-b") {
				t.Fatalf("errors %v, want one refusal naming cluster-b", second.errs.all())
			}
			if n, _ := prov.get("informer " + second.inf.Name() + "/ckpt-refused-" + metrics.CheckpointRefusedOtherCluster); n != 1 {
				t.Errorf("refusal counted %d times", n)
			}
			// The checkpoint written when stopping is cluster-b's.
			codec, _ := checkpoint.DefaultCodec[*corev1.ConfigMap]()
			id := checkpoint.Identity{Cluster: "cluster-b", Resource: "configmaps in ns", Type: checkpoint.TypeName[*corev1.ConfigMap](), Encoding: codec.Name}
			if snap, err := checkpoint.Read(path, id, codec); err != nil || len(snap.Items) != 4 {
				t.Fatalf("checkpoint after the run: %d items, %v", len(snap.Items), err)
			}
		})
	})
	t.Run("unknown cluster", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := seeded(t, 4)
			path := filepath.Join(t.TempDir(), "cms.ckpt")
			writeFirst(t, src, path)
			before, _ := os.ReadFile(path)
			cluster := func(context.Context) (string, error) {
				return "", errors.New("namespaces \"kube-system\" is forbidden")
			}
			prov := newMetricsRecorder()
			second := startCheckpointedWith(t, src, path, CheckpointOptions[*corev1.ConfigMap]{Cluster: cluster}, nil, prov)
			if !second.inf.WaitForCacheSync(t.Context()) || len(second.inf.Cache().List()) != 4 {
				t.Fatal("cold start did not sync")
			}
			synctest.Wait()
			second.stop(t)
			if n, _ := prov.get("informer " + second.inf.Name() + "/ckpt-refused-" + metrics.CheckpointRefusedNoCluster); n != 1 {
				t.Errorf("no-cluster refusals counted %d times", n)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("a checkpoint was written without a cluster identity")
			}
		})
	})
}

// Checkpoints written are counted, with their size.
func TestCheckpointWritesAreMeasured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := seeded(t, 3)
		path := filepath.Join(t.TempDir(), "cms.ckpt")
		prov := newMetricsRecorder()
		r := startCheckpointedWith(t, src, path, CheckpointOptions[*corev1.ConfigMap]{}, nil, prov)
		r.inf.WaitForCacheSync(t.Context())
		synctest.Wait()
		r.stop(t)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		name := "informer " + r.inf.Name()
		if n, _ := prov.get(name + "/ckpt-writes"); n != 1 {
			t.Errorf("%d writes counted, want 1", n)
		}
		if _, v := prov.get(name + "/ckpt-bytes"); int64(v) != fi.Size() {
			t.Errorf("bytes %v, file %d", v, fi.Size())
		}
	})
}

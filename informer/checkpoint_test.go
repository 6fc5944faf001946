package informer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/checkpoint"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
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
	opts.Path = path
	if opts.Identity.Resource == "" {
		opts.Identity.Resource = "configmaps in ns"
	}
	r := &ckptRun{errs: &errSink{}, done: make(chan error, 1)}
	inf, err := NewShared(Options[*corev1.ConfigMap]{Source: src, ErrorHandler: r.errs.add, Checkpoint: opts})
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

// A checkpoint older than the server's history (410) leads to a relist
// that delivers only the real differences: no update for the objects that
// did not change.
func TestRestartFromExpiredCheckpointDeliversOnlyDifferences(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := seeded(t, 20)
		path := filepath.Join(t.TempDir(), "cms.ckpt")
		writeFirst(t, src, path)
		whileDown(t, src)
		src.Compact()

		rec := newViewRecorder[*corev1.ConfigMap]()
		second := startCheckpointed(t, src, path, CheckpointOptions[*corev1.ConfigMap]{}, rec)
		defer second.stop(t)
		if !second.inf.WaitForCacheSync(t.Context()) {
			t.Fatal("not synced")
		}
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
		if n := second.inf.changes.Load(); n != 3 {
			t.Fatalf("%d changes counted for the next checkpoint, want 3", n)
		}
	})
}

// HasSynced waits for the server: a cache filled from a checkpoint is not
// synced while the server cannot confirm it.
func TestCheckpointedInformerSyncsOnlyWhenTheServerConfirms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := seeded(t, 5)
		path := filepath.Join(t.TempDir(), "cms.ckpt")
		writeFirst(t, src, path)
		src.RefuseFor(time.Minute)
		second := startCheckpointed(t, src, path, CheckpointOptions[*corev1.ConfigMap]{}, nil)
		defer second.stop(t)
		synctest.Wait()
		if n := len(second.inf.Cache().List()); n != 5 || second.inf.HasSynced() {
			t.Fatalf("server refusing: %d cached, synced %v; want the checkpoint's 5, not synced", n, second.inf.HasSynced())
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if !second.inf.HasSynced() {
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
			other := checkpoint.Identity{Resource: "secrets in ns", Type: checkpoint.TypeName[*corev1.ConfigMap](), Encoding: "protobuf"}
			codec, _ := checkpoint.DefaultCodec[*corev1.ConfigMap]()
			if err := checkpoint.Write(path, other, codec, checkpoint.Snapshot[*corev1.ConfigMap]{ResourceVersion: "1"}); err != nil {
				t.Fatal(err)
			}
		}, checkpoint.ErrMismatch},
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
		id := checkpoint.Identity{Resource: "configmaps in ns", Type: checkpoint.TypeName[*corev1.ConfigMap](), Encoding: codec.Name}
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

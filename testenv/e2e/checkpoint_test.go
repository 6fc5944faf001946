package e2e_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/checkpoint"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/testenv"
)

// checkpointedFactory is a factory whose informer of T in ns keeps a
// checkpoint in dir, with rec as its handler.
func checkpointedFactory[T object](t *testing.T, dir, ns string, errs *errorLog, rec *recorder[T]) (*kube.Factory, *informer.Shared[T]) {
	t.Helper()
	f, err := kube.NewFactory(env.RESTConfig(), kube.FactoryOptions{
		ErrorHandler: errs.handle,
		Checkpoints:  kube.Checkpoints{Dir: dir},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Shutdown)
	inf, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[T]{Selection: kube.Selection{Namespace: ns}, Checkpoint: true})
	if err != nil {
		t.Fatal(err)
	}
	if rec != nil {
		if _, err := inf.AddHandler(rec.handler(), informer.HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return f, inf
}

// changeWhileDown creates, updates and deletes objects of ns as if while
// the controller was stopped: web-0 and web-1 updated, web-2 and web-3
// deleted, three new pods.
func changePodsWhileDown(t *testing.T, ns string) {
	t.Helper()
	pods := env.Clientset().CoreV1().Pods(ns)
	for _, name := range []string{"web-0", "web-1"} {
		p, err := pods.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Labels = map[string]string{"changed": "while-down"}
		if _, err := pods.Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"web-2", "web-3"} {
		if err := pods.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.CreatePods(t.Context(), ns, 3, testenv.BulkOptions{NamePrefix: "new-"}); err != nil {
		t.Fatal(err)
	}
}

// counts sums a recorder's notifications by kind.
func counts[T object](r *recorder[T]) (initial, adds, updates, deletes, unknown int) {
	for _, n := range r.all() {
		switch n.kind {
		case "add":
			adds++
			if n.initial {
				initial++
			}
		case "update":
			updates++
		case "delete":
			deletes++
			if n.unknown {
				unknown++
			}
		}
	}
	return
}

// A controller restarted from a checkpoint misses nothing that changed
// while it was down: its cache is filled from the file, the watch resumes
// at the checkpoint's version (no list), and the creates, updates and
// deletes made meanwhile reach the cache and the handler as events.
func TestRestartFromCheckpointMissesNothing(t *testing.T) {
	ns := namespace(t, "warm")
	if err := env.CreatePods(t.Context(), ns, 20, testenv.BulkOptions{NamePrefix: "web-"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	errs := &errorLog{}
	first, _ := checkpointedFactory[*corev1.Pod](t, dir, ns, errs, nil)
	startAndSync(t, first, errs)
	first.Shutdown() // writes the checkpoint

	changePodsWhileDown(t, ns)

	rec := &recorder[*corev1.Pod]{}
	second, inf := checkpointedFactory(t, dir, ns, errs, rec)
	startAndSync(t, second, errs)
	requireCacheMatches(t, inf.Cache(), listPods(ns, metav1.ListOptions{}))
	// A deleted pod is first updated (its deletion timestamp set), then
	// deleted: 2 updates of their own plus 2 before the deletes.
	eventually(t, "every change notified", func() (bool, string) {
		initial, adds, updates, deletes, unknown := counts(rec)
		return initial == 20 && adds == 23 && updates == 4 && deletes == 2 && unknown == 0, fmt.Sprint(rec.all())
	})
	if p := inf.Progress(); !p.Started.IsZero() {
		t.Errorf("the restart listed (progress %+v): it should have resumed the watch", p)
	}
	if len(errs.all()) != 0 {
		t.Errorf("errors: %v", errs.all())
	}
}

// A checkpoint older than etcd's history: the server answers 410, the
// informer lists at once, and the handler gets only the real differences,
// no update for the objects that did not change. (Config maps: etcd serves
// their watches, so compaction reaches them.)
func TestRestartFromCheckpointOlderThanCompactionDeliversOnlyDifferences(t *testing.T) {
	ns := namespace(t, "warm410")
	if err := env.CreateConfigMaps(t.Context(), ns, 20, testenv.BulkOptions{NamePrefix: "cm-"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	errs := &errorLog{}
	first, _ := checkpointedFactory[*corev1.ConfigMap](t, dir, ns, errs, nil)
	startAndSync(t, first, errs)
	first.Shutdown()

	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	c, err := cms.Get(t.Context(), "cm-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Data = map[string]string{"changed": "while-down"}
	if _, err := cms.Update(t.Context(), c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(t.Context(), "cm-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.CreateConfigMaps(t.Context(), ns, 1, testenv.BulkOptions{NamePrefix: "new-"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.CompactEtcd(t.Context()); err != nil {
		t.Fatal(err)
	}

	rec := &recorder[*corev1.ConfigMap]{}
	errs2 := &errorLog{}
	second, inf := checkpointedFactory(t, dir, ns, errs2, rec)
	startAndSync(t, second, errs2)
	requireCacheMatches(t, inf.Cache(), listConfigMaps(ns))
	eventually(t, "the differences notified", func() (bool, string) {
		initial, adds, updates, deletes, unknown := counts(rec)
		return initial == 20 && adds == 21 && updates == 1 && deletes == 1 && unknown == 1, fmt.Sprint(rec.all())
	})
	if p := inf.Progress(); p.Started.IsZero() {
		t.Error("no relist after the checkpoint's version expired")
	}
}

// A corrupt checkpoint is reported, naming the file and what is wrong, and
// ignored: the informer starts with a full list.
func TestCorruptCheckpointIsIgnoredWithAClearReport(t *testing.T) {
	ns := namespace(t, "corrupt")
	if err := env.CreatePods(t.Context(), ns, 5, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	errs := &errorLog{}
	first, _ := checkpointedFactory[*corev1.Pod](t, dir, ns, errs, nil)
	startAndSync(t, first, errs)
	first.Shutdown()
	files, _ := filepath.Glob(filepath.Join(dir, "*.ckpt"))
	if len(files) != 1 {
		t.Fatalf("checkpoint files: %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(files[0], data, 0o600); err != nil {
		t.Fatal(err)
	}

	errs2 := &errorLog{}
	second, inf := checkpointedFactory[*corev1.Pod](t, dir, ns, errs2, nil)
	startAndSync(t, second, errs2)
	requireCacheMatches(t, inf.Cache(), listPods(ns, metav1.ListOptions{}))
	reported := errs2.all()
	if len(reported) != 1 || !errors.Is(reported[0], checkpoint.ErrCorrupt) ||
		!strings.Contains(reported[0].Error(), files[0]) || !strings.Contains(reported[0].Error(), "ignored, starting with a full list") {
		t.Fatalf("reported %v, want one error naming the file, the corruption and the cold start", reported)
	}
	if p := inf.Progress(); p.Started.IsZero() || p.Objects != 5 {
		t.Errorf("progress %+v, want a full list of 5", p)
	}
}

// rewriteCheckpoint reads the only checkpoint of dir, written for this
// cluster, lets edit change its identity and snapshot, and writes it back
// (a file from another cluster, or from before a restore, made here).
func rewriteCheckpoint(t *testing.T, dir, ns string, edit func(id *checkpoint.Identity, snap *checkpoint.Snapshot[*corev1.Pod])) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.ckpt"))
	if len(files) != 1 {
		t.Fatalf("checkpoint files: %v", files)
	}
	ks, err := env.Clientset().CoreV1().Namespaces().Get(t.Context(), "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := checkpoint.DefaultCodec[*corev1.Pod]()
	if err != nil {
		t.Fatal(err)
	}
	// The informer's Key, as kube.Key.String prints it, names the resource.
	id := checkpoint.Identity{Cluster: string(ks.UID), Resource: "pods -n " + ns,
		Type: checkpoint.TypeName[*corev1.Pod](), Encoding: codec.Name}
	snap, err := checkpoint.Read(files[0], id, codec)
	if err != nil {
		t.Fatalf("the checkpoint of this cluster does not read back: %v", err)
	}
	edit(&id, &snap)
	if err := checkpoint.Write(files[0], id, codec, snap); err != nil {
		t.Fatal(err)
	}
}

// A checkpoint is served only for the cluster that wrote it, and only once
// the server has confirmed its version: a file of another cluster, and one
// whose version the server has not reached (a cluster restored from a
// backup), are refused with a report naming why, and the handler sees the
// server's objects only, never the file's.
func TestCheckpointOfAnotherClusterOrAheadOfTheServerIsNeverServed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(id *checkpoint.Identity, snap *checkpoint.Snapshot[*corev1.Pod])
		target error
	}{
		{"another cluster", func(id *checkpoint.Identity, _ *checkpoint.Snapshot[*corev1.Pod]) {
			id.Cluster = "00000000-another-cluster"
		}, checkpoint.ErrOtherCluster},
		{"ahead of the server", func(_ *checkpoint.Identity, snap *checkpoint.Snapshot[*corev1.Pod]) {
			rv, _ := strconv.ParseInt(snap.ResourceVersion, 10, 64)
			snap.ResourceVersion = strconv.FormatInt(rv+10_000_000, 10)
		}, reflector.ErrResumeRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t, "foreign")
			if err := env.CreatePods(t.Context(), ns, 5, testenv.BulkOptions{NamePrefix: "web-"}); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			errs := &errorLog{}
			first, _ := checkpointedFactory[*corev1.Pod](t, dir, ns, errs, nil)
			startAndSync(t, first, errs)
			first.Shutdown()
			rewriteCheckpoint(t, dir, ns, func(id *checkpoint.Identity, snap *checkpoint.Snapshot[*corev1.Pod]) {
				ghost := snap.Items[0].DeepCopy()
				ghost.Name, ghost.UID = "ghost", "ghost-uid"
				snap.Items = append(snap.Items, ghost)
				tc.edit(id, snap)
			})

			rec := &recorder[*corev1.Pod]{}
			errs2 := &errorLog{}
			second, inf := checkpointedFactory(t, dir, ns, errs2, rec)
			second.Start(t.Context())
			if !inf.WaitForCacheSync(t.Context()) {
				t.Fatal("not synced")
			}
			requireCacheMatches(t, inf.Cache(), listPods(ns, metav1.ListOptions{}))
			for _, n := range rec.all() {
				if n.name == "ghost" {
					t.Fatalf("the handler saw the file's ghost pod: %v", rec.all())
				}
			}
			reported := errs2.all()
			if len(reported) != 1 || !errors.Is(reported[0], tc.target) {
				t.Fatalf("reported %v, want one error matching %v", reported, tc.target)
			}
			if p := inf.Progress(); p.Started.IsZero() || p.Objects != 5 {
				t.Errorf("progress %+v, want a cold list of 5", p)
			}
		})
	}
}

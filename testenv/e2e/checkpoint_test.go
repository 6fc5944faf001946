package e2e_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
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

// The checkpoint tests: a restart resumes and misses nothing, an expired
// checkpoint delivers only the differences, a corrupt file is refused, an
// untrusted one is never served. Each runs on the three kinds of informer
// that keep one: full objects, a projected view and metadata only.

// ckptPodView is a view of pods as a controller of nodes would declare it.
type ckptPodView struct {
	kube.ViewOf[*corev1.Pod]
	NodeName string          `kube:"spec.nodeName"`
	Phase    corev1.PodPhase `kube:"status.phase"`
	Images   []struct {
		Image string `kube:"image"`
	} `kube:"spec.containers"`
}

var (
	podsResource = kube.Resource{GVR: corev1.SchemeGroupVersion.WithResource("pods"), Namespaced: true}
	cmsResource  = kube.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespaced: true}
)

// checkpointedInformer is a factory whose informer of T in ns keeps a
// checkpoint in dir, with rec (when set) as its handler; res names the
// resource of a metadata informer (zero for the other kinds).
func checkpointedInformer[T object](t *testing.T, dir, ns string, res kube.Resource, errs *errorLog, rec *recorder[T]) (*kube.Factory, *informer.Shared[T]) {
	t.Helper()
	f, err := kube.NewFactory(env.RESTConfig(), kube.FactoryOptions{
		ErrorHandler: errs.handle,
		Checkpoints:  kube.Checkpoints{Dir: dir},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Shutdown)
	inf, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[T]{Resource: res, Selection: kube.Selection{Namespace: ns}, Checkpoint: true})
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

// writeCheckpoint syncs an informer of l's kind over ns with a checkpoint
// in a new directory and stops it, which writes the file, and returns the
// directory. Errors reported meanwhile fail the test.
func writeCheckpoint[T object](t *testing.T, l kind[T], ns string) string {
	t.Helper()
	dir := t.TempDir()
	errs := &errorLog{}
	first, _ := checkpointedInformer[T](t, dir, ns, l.res, errs, nil)
	startAndSync(t, first, errs)
	first.Shutdown()
	if reported := errs.all(); len(reported) != 0 {
		t.Fatalf("errors while writing the checkpoint: %v", reported)
	}
	return dir
}

// kind is one of the informers under test: its type, the resource a
// metadata informer names, and how to make a pod's record in its file
// into a ghost (another name and uid).
type kind[T object] struct {
	name  string
	res   kube.Resource
	ghost func(t *testing.T, record []byte) []byte
	// skipsExpired: an expired checkpoint of this kind is not read
	// (informer.CheckpointOptions.SkipExpired; kube sets it for views).
	skipsExpired bool
}

// ghostPod renames a pod's record: a full pod's record is the pod's
// protobuf, and the fields a view holds are written at their paths in a
// pod, so a view's record reads as a (partial) pod.
func ghostPod(t *testing.T, record []byte) []byte {
	t.Helper()
	var p corev1.Pod
	if err := p.Unmarshal(record); err != nil {
		t.Fatalf("a pod's or a pod view's record does not read as a pod: %v", err)
	}
	p.Name, p.UID = "ghost", "ghost-uid"
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ghostMetadata(t *testing.T, record []byte) []byte {
	t.Helper()
	var m metav1.PartialObjectMetadata
	if err := m.Unmarshal(record); err != nil {
		t.Fatalf("a metadata record does not read as PartialObjectMetadata: %v", err)
	}
	m.Name, m.UID = "ghost", "ghost-uid"
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	fullPods = kind[*corev1.Pod]{name: "full", ghost: ghostPod}
	viewPods = kind[*ckptPodView]{name: "view", ghost: ghostPod}
	metaPods = kind[*metav1.PartialObjectMetadata]{name: "metadata", res: podsResource, ghost: ghostMetadata}
	fullCMs  = kind[*corev1.ConfigMap]{name: "full"}
	viewCMs  = kind[*cmView]{name: "view", skipsExpired: true}
	metaCMs  = kind[*metav1.PartialObjectMetadata]{name: "metadata", res: cmsResource}
)

// changePodsWhileDown creates, updates and deletes objects of ns as if while
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

// An informer restarted from its checkpoint misses nothing that changed
// while it was down: its cache is filled from the file, the watch resumes
// at the checkpoint's version (no list), and the creates, updates and
// deletes made meanwhile reach the cache and the handler as events (a
// deleted pod is first updated, its deletion timestamp set: 2 updates of
// their own plus 2 before the deletes). What the file gave is the
// server's: a view's fields, metadata's labels.
func TestRestartFromCheckpointMissesNothing(t *testing.T) {
	t.Run("full", func(t *testing.T) { restartMissesNothing(t, fullPods) })
	t.Run("view", func(t *testing.T) { restartMissesNothing(t, viewPods) })
	t.Run("metadata", func(t *testing.T) { restartMissesNothing(t, metaPods) })
}

func restartMissesNothing[T object](t *testing.T, l kind[T]) {
	ns := namespace(t, "warm-"+l.name)
	if err := env.CreatePods(t.Context(), ns, 20, testenv.BulkOptions{NamePrefix: "web-"}); err != nil {
		t.Fatal(err)
	}
	dir := writeCheckpoint(t, l, ns)
	if files, _ := filepath.Glob(filepath.Join(dir, "*.ckpt")); len(files) != 1 {
		t.Fatalf("checkpoint files: %v", files)
	}

	changePodsWhileDown(t, ns)

	rec := &recorder[T]{}
	errs := &errorLog{}
	second, inf := checkpointedInformer(t, dir, ns, l.res, errs, rec)
	startAndSync(t, second, errs)
	requireCacheMatches(t, inf.Cache(), listPods(ns, metav1.ListOptions{}))
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
	// What the file gave is what the server has: web-5 was not changed
	// while down, so it came from the file.
	pods, err := listPods(ns, metav1.ListOptions{})(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		got, ok, err := inf.Cache().GetByKey(ns + "/" + p.Name)
		if err != nil || !ok {
			t.Fatalf("%s not cached (%v)", p.Name, err)
		}
		if err := sameAsPod(got, p); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
	}
}

// sameAsPod compares what an informer holds with the server's pod.
func sameAsPod(got any, p *corev1.Pod) error {
	var labels map[string]string
	var uid string
	switch o := got.(type) {
	case *ckptPodView:
		if o.NodeName != p.Spec.NodeName || o.Phase != p.Status.Phase || len(o.Images) != len(p.Spec.Containers) {
			return fmt.Errorf("view %+v of pod %+v", o, p.Spec)
		}
		for i, c := range p.Spec.Containers {
			if o.Images[i].Image != c.Image {
				return fmt.Errorf("image %d: %q, the server's %q", i, o.Images[i].Image, c.Image)
			}
		}
		labels, uid = o.Labels.Map(), string(o.UID)
	case *metav1.PartialObjectMetadata:
		labels, uid = o.Labels, string(o.UID)
	case *corev1.Pod:
		if o.Spec.NodeName != p.Spec.NodeName || o.Status.Phase != p.Status.Phase || len(o.Spec.Containers) != len(p.Spec.Containers) {
			return fmt.Errorf("pod %+v, the server's %+v", o.Spec, p.Spec)
		}
		labels, uid = o.Labels, string(o.UID)
	default:
		return fmt.Errorf("unexpected type %T", got)
	}
	if uid != string(p.UID) || fmt.Sprint(labels) != fmt.Sprint(p.Labels) {
		return fmt.Errorf("uid %s labels %v, the server's %s %v", uid, labels, p.UID, p.Labels)
	}
	return nil
}

// A checkpoint older than etcd's history: the server answers 410, the
// informer lists at once, and the handler gets only the real differences,
// no update for the objects that did not change. A view's expired
// checkpoint is not read: the handler gets the server's objects as a cold
// start's initial adds, and nothing of the file. (Config maps: etcd serves
// their watches, so compaction reaches them.)
func TestRestartFromCheckpointOlderThanCompactionDeliversOnlyDifferences(t *testing.T) {
	t.Run("full", func(t *testing.T) { expiredDeliversDifferences(t, fullCMs) })
	t.Run("view", func(t *testing.T) { expiredDeliversDifferences(t, viewCMs) })
	t.Run("metadata", func(t *testing.T) { expiredDeliversDifferences(t, metaCMs) })
}

func expiredDeliversDifferences[T object](t *testing.T, l kind[T]) {
	ns := namespace(t, "warm410-"+l.name)
	if err := env.CreateConfigMaps(t.Context(), ns, 20, testenv.BulkOptions{NamePrefix: "cm-"}); err != nil {
		t.Fatal(err)
	}
	dir := writeCheckpoint(t, l, ns)

	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	c, err := cms.Get(t.Context(), "cm-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Labels = map[string]string{"changed": "while-down"}
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

	rec := &recorder[T]{}
	errs2 := &errorLog{}
	second, inf := checkpointedInformer(t, dir, ns, l.res, errs2, rec)
	startAndSync(t, second, errs2)
	requireCacheMatches(t, inf.Cache(), listConfigMaps(ns))
	if l.skipsExpired {
		eventually(t, "the server's objects notified as a cold start's", func() (bool, string) {
			initial, adds, updates, deletes, _ := counts(rec)
			return initial == 20 && adds == 20 && updates == 0 && deletes == 0, fmt.Sprint(rec.all())
		})
		if len(rec.of("cm-1")) != 0 {
			t.Error("the handler was told of cm-1, deleted before the restart: the expired file was served")
		}
	} else {
		eventually(t, "the differences notified", func() (bool, string) {
			initial, adds, updates, deletes, unknown := counts(rec)
			return initial == 20 && adds == 21 && updates == 1 && deletes == 1 && unknown == 1, fmt.Sprint(rec.all())
		})
	}
	if p := inf.Progress(); p.Started.IsZero() {
		t.Error("no relist after the checkpoint's version expired")
	}
}

// A corrupt checkpoint is reported, naming the file and what is wrong, and
// ignored: the informer starts with a full list.
func TestCorruptCheckpointIsIgnoredWithAClearReport(t *testing.T) {
	t.Run("full", func(t *testing.T) { corruptIgnored(t, fullPods) })
	t.Run("view", func(t *testing.T) { corruptIgnored(t, viewPods) })
	t.Run("metadata", func(t *testing.T) { corruptIgnored(t, metaPods) })
}

func corruptIgnored[T object](t *testing.T, l kind[T]) {
	ns := namespace(t, "corrupt-"+l.name)
	if err := env.CreatePods(t.Context(), ns, 5, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := writeCheckpoint(t, l, ns)
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
	second, inf := checkpointedInformer[T](t, dir, ns, l.res, errs2, nil)
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

// record is one object of a checkpoint file, kept as its bytes: what
// rewriteRecords edits without knowing the file's codec.
type record struct{ b []byte }

func (*record) GetNamespace() string       { return "" }
func (*record) GetName() string            { return "" }
func (*record) GetResourceVersion() string { return "" }

var recordCodec = checkpoint.Codec[*record]{
	Encode: func(dst []byte, r *record) ([]byte, error) { return append(dst, r.b...), nil },
	Decode: func(b []byte) (*record, error) { return &record{b: bytes.Clone(b)}, nil },
}

// fileIdentity reads the identity in the header of the checkpoint at path
// (magic, version, header length, JSON header).
func fileIdentity(t *testing.T, path string) checkpoint.Identity {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const fixed = len("KINFCKPT") + 2 + 4
	hl := int(binary.BigEndian.Uint32(data[fixed-4 : fixed]))
	var h struct {
		Identity checkpoint.Identity `json:"identity"`
	}
	if err := json.Unmarshal(data[fixed:fixed+hl], &h); err != nil {
		t.Fatal(err)
	}
	return h.Identity
}

// rewriteRecords reads the only checkpoint of dir record by record, lets
// edit change its identity and snapshot, and writes it back.
func rewriteRecords(t *testing.T, dir string, edit func(id *checkpoint.Identity, snap *checkpoint.Snapshot[*record])) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.ckpt"))
	if len(files) != 1 {
		t.Fatalf("checkpoint files: %v", files)
	}
	id := fileIdentity(t, files[0])
	codec := recordCodec
	codec.Name = id.Encoding
	snap, err := checkpoint.Read(files[0], id, codec)
	if err != nil {
		t.Fatalf("the checkpoint does not read back: %v", err)
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
	t.Run("full", func(t *testing.T) { neverServedUntrusted(t, fullPods) })
	t.Run("view", func(t *testing.T) { neverServedUntrusted(t, viewPods) })
	t.Run("metadata", func(t *testing.T) { neverServedUntrusted(t, metaPods) })
}

func neverServedUntrusted[T object](t *testing.T, l kind[T]) {
	for _, tc := range []struct {
		name   string
		edit   func(id *checkpoint.Identity, snap *checkpoint.Snapshot[*record])
		target error
	}{
		{"another cluster", func(id *checkpoint.Identity, _ *checkpoint.Snapshot[*record]) {
			id.Cluster = "00000000-another-cluster"
		}, checkpoint.ErrOtherCluster},
		{"ahead of the server", func(_ *checkpoint.Identity, snap *checkpoint.Snapshot[*record]) {
			rv, _ := strconv.ParseInt(snap.ResourceVersion, 10, 64)
			snap.ResourceVersion = strconv.FormatInt(rv+10_000_000, 10)
		}, reflector.ErrResumeRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t, "foreign-"+l.name)
			if err := env.CreatePods(t.Context(), ns, 5, testenv.BulkOptions{NamePrefix: "web-"}); err != nil {
				t.Fatal(err)
			}
			dir := writeCheckpoint(t, l, ns)
			rewriteRecords(t, dir, func(id *checkpoint.Identity, snap *checkpoint.Snapshot[*record]) {
				snap.Items = append(snap.Items, &record{b: l.ghost(t, snap.Items[0].b)})
				tc.edit(id, snap)
			})

			rec := &recorder[T]{}
			errs2 := &errorLog{}
			second, inf := checkpointedInformer(t, dir, ns, l.res, errs2, rec)
			second.Start(context.Background()) // stopped by Shutdown
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

// The ghost record really is read back as an object when the file is
// trusted: without this, the tests above could pass on a ghost the
// decoder drops.
func TestAGhostRecordIsServedFromATrustedFile(t *testing.T) {
	t.Run("full", func(t *testing.T) { ghostServed(t, fullPods) })
	t.Run("view", func(t *testing.T) { ghostServed(t, viewPods) })
	t.Run("metadata", func(t *testing.T) { ghostServed(t, metaPods) })
}

func ghostServed[T object](t *testing.T, l kind[T]) {
	ns := namespace(t, "ghost-"+l.name)
	if err := env.CreatePods(t.Context(), ns, 3, testenv.BulkOptions{NamePrefix: "web-"}); err != nil {
		t.Fatal(err)
	}
	dir := writeCheckpoint(t, l, ns)
	rewriteRecords(t, dir, func(_ *checkpoint.Identity, snap *checkpoint.Snapshot[*record]) {
		snap.Items = append(snap.Items, &record{b: l.ghost(t, snap.Items[0].b)})
	})
	errs := &errorLog{}
	second, inf := checkpointedInformer[T](t, dir, ns, l.res, errs, nil)
	startAndSync(t, second, errs)
	if _, ok, _ := inf.Cache().GetByKey(ns + "/ghost"); !ok {
		t.Fatalf("the ghost of a trusted file is not cached (%d objects): the trust tests prove nothing", len(inf.Cache().List()))
	}
}

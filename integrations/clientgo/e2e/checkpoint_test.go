package e2e

import (
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/integrations/clientgo"
	"github.com/kinformer/kinformer/kube"
)

// A client-go SharedIndexInformer restarted from a checkpoint: the adapter
// over an informer of a kube.Factory with checkpoints. The restarted
// informer's handler gets the checkpoint's objects as the initial list
// (at the versions they had when the first run stopped) and then what
// changed while nothing ran as ordinary notifications: the update, the
// delete and the create a cold start would have folded into its initial
// list. That sequence is the proof the second run started from the file.
func TestRestartFromCheckpoint(t *testing.T) {
	ctx := t.Context()
	ns := "clientgo-checkpoint"
	if err := env.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	for _, name := range []string{"a", "b"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()

	// run starts a factory with checkpoints in dir, presents its informer
	// of the namespace's config maps as a client-go informer with a
	// recording handler, waits for sync, runs during, and shuts the
	// factory down (which writes the checkpoint).
	run := func(during func(inf toolscache.SharedIndexInformer, rec *recorder)) {
		f, err := kube.NewFactory(env.RESTConfig(), kube.FactoryOptions{Checkpoints: kube.Checkpoints{Dir: dir}})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Shutdown()
		shared, _, err := kube.Informer(ctx, f, kube.InformerOptions[*corev1.ConfigMap]{
			Selection:  kube.Selection{Namespace: ns},
			Checkpoint: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		inf, err := clientgo.New(clientgo.Options[*corev1.ConfigMap]{Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{byObj: map[string][]string{}}
		reg, err := inf.AddEventHandler(rec)
		if err != nil {
			t.Fatal(err)
		}
		f.Start(ctx)
		if !toolscache.WaitFor(ctx, "", inf.HasSyncedChecker(), reg.HasSyncedChecker()) {
			t.Fatal("never synced")
		}
		during(inf, rec)
	}

	run(func(inf toolscache.SharedIndexInformer, rec *recorder) {
		if got := rec.snapshot(); len(got) != 2 {
			t.Fatalf("first run: notifications %v, want an initial add of a and b", got)
		}
	})
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("%d files in the checkpoint directory after the first run, want 1", len(files))
	}

	// While nothing runs: update a, delete b, create c.
	a, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.Data = map[string]string{"k": "v"}
	if _, err := cms.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]string{}
	for _, cm := range list.Items {
		truth[cm.Name] = cm.ResourceVersion
	}

	run(func(inf toolscache.SharedIndexInformer, rec *recorder) {
		want := map[string][]string{
			"a": {"add initial", "update"},
			"b": {"add initial", "delete"},
			"c": {"add"},
		}
		deadline := time.Now().Add(time.Minute) // a bound against hangs, not a measurement
		for !maps.Equal(versions(inf.GetStore().List()), truth) || !maps.EqualFunc(rec.snapshot(), want, slices.Equal) {
			if time.Now().After(deadline) {
				t.Fatalf("cache %v (server %v), notifications %v (want %v: a cold start would give every object one initial add)",
					versions(inf.GetStore().List()), truth, rec.snapshot(), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

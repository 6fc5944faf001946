package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/checkpoint"
	"github.com/kinformer/kinformer/informer"
)

// A factory informer with Checkpoint writes its cache when the factory
// shuts down, into a 0600 file named after its key, and the next factory's
// informer starts from it.
func TestFactoryCheckpointsAnInformerAndStartsFromIt(t *testing.T) {
	cfg := listWatchServer(t, map[string][]runtime.Object{
		"/api/v1/namespaces/shop/pods": {pod("shop", "web-0", "8"), pod("shop", "web-1", "9")},
	})
	dir := filepath.Join(t.TempDir(), "ckpt")
	run := func() (*Factory, *informer.Shared[*corev1.Pod]) {
		f, err := NewFactory(cfg, FactoryOptions{Checkpoints: Checkpoints{Dir: dir}, ErrorHandler: func(err error) { t.Error(err) }})
		if err != nil {
			t.Fatal(err)
		}
		inf, err := Informer(f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "shop"}, Checkpoint: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f.Start(ctx)
		if !inf.WaitForCacheSync(ctx) {
			t.Fatal("not synced")
		}
		if _, ok, err := inf.Cache().GetByKey("shop/web-1"); err != nil || !ok || len(inf.Cache().List()) != 2 {
			t.Fatalf("cache: %d objects", len(inf.Cache().List()))
		}
		return f, inf
	}
	f, first := run()
	if first.Progress().Objects != 2 {
		t.Fatalf("first run listed %+v", first.Progress())
	}
	f.Shutdown()
	files, err := filepath.Glob(filepath.Join(dir, "*.ckpt"))
	if err != nil || len(files) != 1 {
		t.Fatalf("checkpoint files %v (%v)", files, err)
	}
	st, _ := os.Stat(files[0])
	if st.Mode().Perm() != 0o600 {
		t.Errorf("checkpoint mode %v", st.Mode().Perm())
	}
	f, second := run() // from the checkpoint: the server confirms it (its lists answer any version)
	f.Shutdown()
	if p := second.Progress(); !p.Started.IsZero() {
		t.Fatalf("the run from the checkpoint listed: %+v", p)
	}
}

func TestFactoryRefusesCheckpointsOfSecretsUnlessAllowed(t *testing.T) {
	dir := t.TempDir()
	for _, allow := range []bool{false, true} {
		f, err := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, FactoryOptions{Checkpoints: Checkpoints{Dir: dir, AllowSecrets: allow}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Informer(f, InformerOptions[*corev1.Secret]{Checkpoint: true})
		if allow != (err == nil) || (!allow && !errors.Is(err, ErrCheckpointSecrets)) {
			t.Errorf("AllowSecrets %v: %v", allow, err)
		}
		if _, err := Informer(f, InformerOptions[*corev1.ConfigMap]{Checkpoint: true}); err != nil {
			t.Errorf("config maps: %v", err)
		}
		f.Shutdown()
	}
	f, _ := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, FactoryOptions{})
	defer f.Shutdown()
	if _, err := Informer(f, InformerOptions[*corev1.Pod]{Checkpoint: true}); err == nil {
		t.Error("checkpoint without a directory: no error")
	}
}

// A large checkpoint decodes on several goroutines through the typed
// source's interning decoder.
func TestCheckpointDecodesConcurrentlyThroughTheSourceDecoder(t *testing.T) {
	cfg := &rest.Config{Host: "http://127.0.0.1:1"}
	f, err := NewFactory(cfg, FactoryOptions{Checkpoints: Checkpoints{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	src, err := Typed[*corev1.Pod](cfg, SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := ResourceFor[*corev1.Pod]()
	opts, err := checkpointFor[*corev1.Pod](f, Key{Source: SourceTyped, Resource: res}, src, true)
	if err != nil {
		t.Fatal(err)
	}
	items := make([]*corev1.Pod, 2000)
	for i := range items {
		items[i] = pod("shop", fmt.Sprintf("web-%d", i), fmt.Sprint(i+1))
	}
	var b bytes.Buffer
	if err := checkpoint.Encode(&b, opts.Identity, opts.Codec, checkpoint.Snapshot[*corev1.Pod]{ResourceVersion: "2001", Items: items}); err != nil {
		t.Fatal(err)
	}
	snap, err := checkpoint.Decode(&b, opts.Identity, opts.Codec)
	if err != nil || len(snap.Items) != 2000 {
		t.Fatalf("%d items, %v", len(snap.Items), err)
	}
	for _, p := range snap.Items {
		if p.Namespace != "shop" || p.Kind != "Pod" || p.Spec.NodeName == "" {
			t.Fatalf("decoded %+v", p)
		}
	}
}

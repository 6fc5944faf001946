package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/checkpoint"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube/internal/source"
)

// A factory informer with Checkpoint writes its cache when the factory
// shuts down, into a 0600 file named after its key, and the next factory's
// informer starts from it: of full objects and of a view.
func TestFactoryCheckpointsAnInformerAndStartsFromIt(t *testing.T) {
	t.Run("pods", func(t *testing.T) {
		checkpointsAndStartsFrom(t, func(p *corev1.Pod) *corev1.Pod { return p })
	})
	t.Run("view", func(t *testing.T) { checkpointsAndStartsFrom(t, projectTestPod) })
}

// checkpointsAndStartsFrom runs the informer of T twice on one directory;
// want gives what T must hold of a pod.
func checkpointsAndStartsFrom[T cache.Object](t *testing.T, want func(*corev1.Pod) T) {
	p0, p1 := pod("shop", "web-0", "8"), pod("shop", "web-1", "9")
	p1.Spec.NodeName, p1.Labels = "node-1", map[string]string{"app": "web"}
	p1.Spec.Containers = []corev1.Container{{Name: "c", Image: "nginx"}}
	cfg := clusterServer(t, "uid-a", map[string][]runtime.Object{
		"/api/v1/namespaces/shop/pods": {p0.DeepCopy(), p1.DeepCopy()},
	})
	dir := filepath.Join(t.TempDir(), "ckpt")
	run := func() (*Factory, *informer.Shared[T]) {
		f, err := NewFactory(cfg, FactoryOptions{Checkpoints: Checkpoints{Dir: dir}, ErrorHandler: func(err error) { t.Error(err) }})
		if err != nil {
			t.Fatal(err)
		}
		inf, _, err := Informer(t.Context(), f, InformerOptions[T]{Selection: Selection{Namespace: "shop"}, Checkpoint: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f.Start(ctx)
		if !inf.WaitForCacheSync(ctx) {
			t.Fatal("not synced")
		}
		got, ok, err := inf.Cache().GetByKey("shop/web-1")
		if err != nil || !ok || len(inf.Cache().List()) != 2 {
			t.Fatalf("cache: %d objects", len(inf.Cache().List()))
		}
		if w := want(p1); !apiequality.Semantic.DeepEqual(got, w) {
			t.Fatalf("cached web-1:\n got %+v\nwant %+v", got, w)
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

// A view that reads one field twice cannot be written back: asking for
// its checkpoint is an error naming the field, at once.
func TestFactoryRefusesTheCheckpointOfAViewReadingAFieldTwice(t *testing.T) {
	f, err := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, FactoryOptions{Checkpoints: Checkpoints{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	_, _, err = Informer(t.Context(), f, InformerOptions[*twiceView]{Checkpoint: true})
	if err == nil || !strings.Contains(err.Error(), "spec.nodeName") {
		t.Fatalf("err = %v, want one naming spec.nodeName", err)
	}
	if _, _, err := Informer(t.Context(), f, InformerOptions[*twiceView]{}); err != nil {
		t.Errorf("without a checkpoint: %v", err)
	}
}

type twiceView struct {
	ViewOf[*corev1.Pod]
	Node  string `kube:"spec.nodeName"`
	Again string `kube:"spec.nodeName"`
}

func TestFactoryRefusesCheckpointsOfSecretsUnlessAllowed(t *testing.T) {
	dir := t.TempDir()
	for _, allow := range []bool{false, true} {
		f, err := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, FactoryOptions{Checkpoints: Checkpoints{Dir: dir, AllowSecrets: allow}})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = Informer(t.Context(), f, InformerOptions[*corev1.Secret]{Checkpoint: true})
		if allow != (err == nil) || (!allow && !errors.Is(err, ErrCheckpointSecrets)) {
			t.Errorf("AllowSecrets %v: %v", allow, err)
		}
		if _, _, err := Informer(t.Context(), f, InformerOptions[*corev1.ConfigMap]{Checkpoint: true}); err != nil {
			t.Errorf("config maps: %v", err)
		}
		f.Shutdown()
	}
	f, _ := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, FactoryOptions{})
	defer f.Shutdown()
	if _, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Checkpoint: true}); err == nil {
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
	k, err := kindOf[*corev1.Pod](t.Context(), cfg, Resource{}, "InformerOptions.Resource", nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := k.newSource(cfg, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts, err := checkpointFor(f, Key{Resource: k.res, Type: typeName[*corev1.Pod]()}, src, true)
	if err != nil {
		t.Fatal(err)
	}
	opts.Identity.Cluster = "uid-a" // what the factory would read from the server
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

// clusterServer is listWatchServer for a cluster whose kube-system
// namespace has the given uid.
func clusterServer(t *testing.T, uid string, objects map[string][]runtime.Object) *rest.Config {
	t.Helper()
	lw := listWatchServer(t, objects)
	target, err := url.Parse(lw.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	return fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/namespaces/kube-system" {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: types.UID(uid), ResourceVersion: "1"}}
			writeBody(w, mediaJSON, jsonBytes(t, ns))
			return
		}
		proxy.ServeHTTP(w, r)
	})
}

// A checkpoint written on one cluster is refused on another, even where
// the other has the same resource and every version the file names: the
// second factory reports it, lists, and serves only its own objects.
func TestFactoryRefusesACheckpointOfAnotherCluster(t *testing.T) {
	dir := t.TempDir()
	run := func(cfg *rest.Config) ([]string, []error) {
		var mu sync.Mutex
		var errs []error
		f, err := NewFactory(cfg, FactoryOptions{Checkpoints: Checkpoints{Dir: dir}, ErrorHandler: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
		}})
		if err != nil {
			t.Fatal(err)
		}
		inf, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: Selection{Namespace: "shop"}, Checkpoint: true})
		if err != nil {
			t.Fatal(err)
		}
		f.Start(t.Context())
		if !inf.WaitForCacheSync(t.Context()) {
			t.Fatal("not synced")
		}
		var names []string
		for _, p := range inf.Cache().List() {
			names = append(names, p.Name)
		}
		slices.Sort(names)
		f.Shutdown()
		mu.Lock()
		defer mu.Unlock()
		return names, errs
	}
	a := clusterServer(t, "uid-a", map[string][]runtime.Object{"/api/v1/namespaces/shop/pods": {pod("shop", "a-0", "8"), pod("shop", "a-1", "9")}})
	b := clusterServer(t, "uid-b", map[string][]runtime.Object{"/api/v1/namespaces/shop/pods": {pod("shop", "b-0", "5")}})
	if names, errs := run(a); fmt.Sprint(names) != "[a-0 a-1]" || len(errs) != 0 {
		t.Fatalf("cluster a: %v, errors %v", names, errs)
	}
	names, errs := run(b)
	if fmt.Sprint(names) != "[b-0]" {
		t.Fatalf("cluster b serves %v, want only its own [b-0]", names)
	}
	if len(errs) != 1 || !errors.Is(errs[0], checkpoint.ErrOtherCluster) || !strings.Contains(errs[0].Error(), "uid-a") {
		t.Fatalf("errors %v, want one refusal naming cluster uid-a", errs)
	}
	// Cluster a, back, finds b's checkpoint and refuses it in turn.
	if names, errs := run(a); fmt.Sprint(names) != "[a-0 a-1]" || len(errs) != 1 || !errors.Is(errs[0], checkpoint.ErrOtherCluster) {
		t.Fatalf("cluster a again: %v, errors %v", names, errs)
	}
}

// A factory that was shut down hands out no informer: every way of asking
// says ErrShutdown at once.
func TestFactoryAfterShutdownRefusesInformers(t *testing.T) {
	f, err := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, FactoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{}); err != nil {
		t.Fatal(err)
	}
	f.Shutdown()
	if _, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{}); !errors.Is(err, ErrShutdown) {
		t.Errorf("Informer of an existing key: %v", err)
	}
	if _, _, err := Informer(t.Context(), f, InformerOptions[*corev1.ConfigMap]{}); !errors.Is(err, ErrShutdown) {
		t.Errorf("Informer of a new key: %v", err)
	}
	if _, err := Acquire(t.Context(), f, InformerOptions[*corev1.Secret]{}); !errors.Is(err, ErrShutdown) {
		t.Errorf("Acquire: %v", err)
	}
	if _, _, err := Informer(t.Context(), f, InformerOptions[*metav1.PartialObjectMetadata]{Resource: Resource{GVR: corev1.SchemeGroupVersion.WithResource("pods"), Namespaced: true}}); !errors.Is(err, ErrShutdown) {
		t.Errorf("metadata informer: %v", err)
	}
}

// A checkpoint path that is a FIFO (or a directory) never blocks the
// factory: the informer reports it, starts cold, and Shutdown returns.
func TestFactoryShutdownNeverHangsOnACheckpointPath(t *testing.T) {
	cfg := clusterServer(t, "uid-a", map[string][]runtime.Object{"/api/v1/namespaces/shop/pods": {pod("shop", "web-0", "8")}})
	res, _ := resourceFor[*corev1.Pod]()
	key := Key{Resource: res, Selection: Selection{Namespace: "shop"}, Type: typeName[*corev1.Pod]()}
	for _, kind := range []string{"fifo", "directory"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			path := checkpoint.Path(dir, checkpoint.Identity{Resource: key.String(), Type: checkpoint.TypeName[*corev1.Pod](), Encoding: "protobuf"})
			var err error
			if kind == "fifo" {
				err = syscall.Mkfifo(path, 0o600)
			} else {
				err = os.Mkdir(path, 0o700)
			}
			if err != nil {
				t.Skipf("cannot make a %s: %v", kind, err)
			}
			var mu sync.Mutex
			var errs []error
			f, err := NewFactory(cfg, FactoryOptions{Checkpoints: Checkpoints{Dir: dir}, ErrorHandler: func(err error) {
				mu.Lock()
				defer mu.Unlock()
				errs = append(errs, err)
			}})
			if err != nil {
				t.Fatal(err)
			}
			inf, _, err := Informer(t.Context(), f, InformerOptions[*corev1.Pod]{Selection: key.Selection, Checkpoint: true})
			if err != nil {
				t.Fatal(err)
			}
			f.Start(t.Context())
			if !inf.WaitForCacheSync(t.Context()) || len(inf.Cache().List()) != 1 {
				t.Fatal("cold start did not sync")
			}
			done := make(chan struct{})
			go func() { f.Shutdown(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second): // a hang fails rather than stalls the suite
				t.Fatal("Shutdown hung")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(errs) == 0 || !errors.Is(errs[0], checkpoint.ErrNotRegular) {
				t.Fatalf("errors %v, want the path refused as not a regular file first", errs)
			}
		})
	}
}

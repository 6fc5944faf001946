package controllerruntime

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kinformer/kinformer/testenv"
)

// env is the control plane every test shares, started by TestMain: a real
// etcd and kube-apiserver from package testenv.
var env *testenv.Env

type withEnv struct{ m *testing.M }

func (w withEnv) Run() int {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	bins, err := testenv.Build(ctx, testenv.BuildOptions{Progress: os.Stderr})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "controllerruntime: build control plane:", err)
		return 1
	}
	env, err = testenv.Start(context.Background(), testenv.Options{Binaries: bins})
	if err != nil {
		fmt.Fprintln(os.Stderr, "controllerruntime: start control plane:", err)
		return 1
	}
	code := w.m.Run()
	if c, err := rest.HTTPClientFor(env.RESTConfig()); err == nil && c.Transport != nil {
		utilnet.CloseIdleConnectionsFor(c.Transport)
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "controllerruntime: stop control plane:", err)
		code = 1
	}
	return code
}

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		// A child of TestConformanceHandlerPanic, on its parent's control
		// plane; it exits at once, with its HTTP connections still open
		// (the parent, which runs the caches' tests, is checked for leaks).
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(withEnv{m},
		// controller-runtime's own cache (the reference) leaves the filter
		// of a stopped metadata watch blocked on its send: its leak, not ours.
		goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop"),
	)
}

// impl is one implementation of controller-runtime's cache under test.
type impl struct {
	name string
	new  crcache.NewCacheFunc
}

// impls are controller-runtime's own cache, the reference, and kinformer's.
var impls = []impl{
	{"controller-runtime", crcache.New},
	{"kinformer", New},
}

var namespaces atomic.Int64

// newNamespace creates a namespace of the test's own.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("cr-%d-%d", os.Getpid()%10000, namespaces.Add(1))
	if err := env.CreateNamespace(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	return name
}

func clientset() kubernetes.Interface { return env.Clientset() }

// conform runs body once per implementation, in the same test, so that every
// difference between the two caches shows as a failing subtest. Each gets a
// namespace of its own, filled by setup before its cache is made, and a cache
// made with opts, started and synced.
func conform(t *testing.T, setup func(t *testing.T, ns string), opts func(ns string) crcache.Options, body func(t *testing.T, c crcache.Cache, ns string)) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			ns := newNamespace(t)
			if setup != nil {
				setup(t, ns)
			}
			var o crcache.Options
			if opts != nil {
				o = opts(ns)
			}
			c, err := im.new(env.RESTConfig(), o)
			if err != nil {
				t.Fatal(err)
			}
			stop := start(t, c)
			defer stop()
			if !c.WaitForCacheSync(t.Context()) {
				t.Fatal("WaitForCacheSync failed")
			}
			body(t, c, ns)
		})
	}
}

// start runs c's Start until the returned function is called, which waits
// for Start to return.
func start(t testing.TB, c crcache.Cache) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := c.Start(ctx); err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	return func() { cancel(); wg.Wait() }
}

// eventually polls cond until it holds, and fails the test if it does not
// within a minute (a bound against hangs, not a measurement).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func createConfigMap(t *testing.T, ns, name string, labels, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm, err := clientset().CoreV1().ConfigMaps(ns).Create(t.Context(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: data}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

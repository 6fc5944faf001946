package kubetest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/kube/kubetest"
)

// widgets is the custom resource the tests serve.
var widgets = kubetest.CustomResource{
	GVR:        schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
	Kind:       "Widget",
	Namespaced: true,
	ShortNames: []string{"wd"},
}

var widgetsResource = kube.Resource{GVR: widgets.GVR, Kind: widgets.Kind, Namespaced: true}

func pod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{NodeName: "node-" + name, Containers: []corev1.Container{{Name: "c", Image: "img"}}},
	}
}

func clientset(t testing.TB, srv *kubetest.Server) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// errs collects the errors a factory's informers report.
type errs struct {
	mu  sync.Mutex
	all []error
}

func (e *errs) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, err)
}

func (e *errs) list() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.all...)
}

// factory returns a factory of srv with a short back-off, shut down at
// the end of the test, and the errors its informers report.
func factory(t testing.TB, srv *kubetest.Server, opts kube.FactoryOptions) (*kube.Factory, *errs) {
	t.Helper()
	e := &errs{}
	opts.ErrorHandler = e.add
	opts.Settings.BackoffInitial = 10 * time.Millisecond
	opts.Settings.BackoffMax = 50 * time.Millisecond
	f, err := kube.NewFactory(srv.Config(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Shutdown)
	return f, e
}

// ctx is a test's context, bounded so a broken test fails rather than
// hangs.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// eventually waits until cond holds, failing the test with what after 20 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// requests returns the requests of srv with the given verb.
func requests(srv *kubetest.Server, verb string) []kubetest.Request {
	var out []kubetest.Request
	for _, r := range srv.Requests() {
		if r.Verb == verb {
			out = append(out, r)
		}
	}
	return out
}

package kubetest_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/kube/kubetest"
	"github.com/kinformer/kinformer/listwatch"
)

func TestStartRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts kubetest.Options
		want string
	}{
		{"custom resource without kind", kubetest.Options{CustomResources: []kubetest.CustomResource{{GVR: widgets.GVR}}}, "needs a version, a resource and a kind"},
		{"custom resource twice", kubetest.Options{CustomResources: []kubetest.CustomResource{widgets, widgets}}, "served already"},
		{"custom resource over a built-in one", kubetest.Options{CustomResources: []kubetest.CustomResource{
			{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Thing"}}}, "served already"},
		{"object of a kind not served", kubetest.Options{Objects: []runtime.Object{&corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "b"}}}}, "not served"},
		{"namespaced object without namespace", kubetest.Options{Objects: []runtime.Object{pod("", "a", nil)}}, "namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := kubetest.Start(tc.opts)
			if err == nil {
				srv.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}

// Close ends open watches and may be called again; the server then refuses
// connections.
func TestClose(t *testing.T) {
	srv, err := kubetest.Start(kubetest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := openWatch(t, srv)
	eventually(t, "an open watch", func() bool { return srv.OpenWatches() == 1 })
	srv.Close()
	srv.Close()
	if _, err := w.Next(); err == nil {
		t.Error("watch after Close: no error")
	}
	if _, err := podSource(t, srv, kube.Selection{}).List(ctx(t), listwatch.Options{}); err == nil {
		t.Error("list after Close: no error")
	}
}

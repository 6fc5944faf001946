package kubetest_test

import (
	"net/http"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/kube/kubetest"
)

// Discovery serves what kube.Resolve and client-go's RESTMapper read:
// built-in resources at one version each, with scope and short names, and
// the custom resources.
func TestDiscovery(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{CustomResources: []kubetest.CustomResource{widgets}})
	c := ctx(t)
	for name, want := range map[string]kube.Resource{
		"po":                  {GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true},
		"nodes":               {GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, Kind: "Node"},
		"Deployment":          {GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true},
		"hpa":                 {GVR: schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}, Kind: "HorizontalPodAutoscaler", Namespaced: true},
		"clusterroles":        {GVR: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, Kind: "ClusterRole"},
		"events":              {GVR: schema.GroupVersionResource{Version: "v1", Resource: "events"}, Kind: "Event", Namespaced: true},
		"widgets.example.com": widgetsResource,
	} {
		got, err := kube.Resolve(c, srv.Config(), name)
		if err != nil {
			t.Errorf("Resolve(%q): %v", name, err)
		} else if got != want {
			t.Errorf("Resolve(%q) = %+v, want %+v", name, got, want)
		}
	}
	if _, err := kube.Resolve(c, srv.Config(), "gadgets"); !meta.IsNoMatchError(err) {
		t.Errorf("Resolve(gadgets): %v, want no match", err)
	}

	dc, err := discovery.NewDiscoveryClientForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatal(err)
	}
	mapping, err := restmapper.NewDiscoveryRESTMapper(groups).RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Widget"})
	if err != nil {
		t.Fatal(err)
	}
	if mapping.Resource != widgets.GVR || mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		t.Errorf("Widget maps to %v, scope %s", mapping.Resource, mapping.Scope.Name())
	}
	v, err := dc.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Major != "1" || !strings.HasPrefix(v.GitVersion, "v1."+v.Minor+".") {
		t.Errorf("server version %+v", v)
	}
}

// Paths and verbs the server does not serve answer as kube-apiserver does.
func TestNotServed(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{})
	for _, tc := range []struct {
		method, path, accept string
		code                 int
	}{
		{"GET", "/api/v1/gadgets", "", http.StatusNotFound},
		{"GET", "/apis/apps/v1beta1/deployments", "", http.StatusNotFound}, // one version per kind
		{"GET", "/api/v1/namespaces/ns/nodes", "", http.StatusNotFound},    // cluster-scoped
		{"GET", "/api/v1/pods/a", "", http.StatusNotFound},                 // a pod needs its namespace
		{"GET", "/api/v1/namespaces/ns/pods/a/log", "", http.StatusNotFound},
		{"DELETE", "/api/v1/namespaces/ns/pods", "", http.StatusMethodNotAllowed},
		{"GET", "/api/v1/pods", "application/json;as=Table;v=v1;g=meta.k8s.io", http.StatusNotAcceptable},
		{"GET", "/apis/nothing", "", http.StatusNotFound},
		{"GET", "/readyz", "", http.StatusOK},
		{"GET", "/api/v1/pods", "application/json;as=Table;v=v1;g=meta.k8s.io, application/json", http.StatusOK},
	} {
		req, err := http.NewRequestWithContext(ctx(t), tc.method, srv.URL()+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s %s (Accept %q): %d, want %d", tc.method, tc.path, tc.accept, resp.StatusCode, tc.code)
		}
	}
}

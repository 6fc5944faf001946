package discover

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a server's API: per group (core first), its versions
// (preferred first) and their resources; broken group versions answer 503
// (legacy) or are stale (aggregated).
type fixtureVersion struct {
	gv        schema.GroupVersion
	resources []metav1.APIResource
	broken    bool
}

func fixture() [][]fixtureVersion {
	verbs := metav1.Verbs{"get", "list", "watch"}
	res := func(name, singular, kind string, namespaced bool, short ...string) metav1.APIResource {
		return metav1.APIResource{Name: name, SingularName: singular, Kind: kind, Namespaced: namespaced, Verbs: verbs, ShortNames: short}
	}
	core := schema.GroupVersion{Version: "v1"}
	return [][]fixtureVersion{
		{{gv: core, resources: []metav1.APIResource{
			res("pods", "pod", "Pod", true, "po"), res("pods/status", "pod", "Pod", true),
			res("nodes", "node", "Node", false, "no"), res("endpoints", "endpoints", "Endpoints", true, "ep"),
			res("services", "service", "Service", true, "svc"), res("componentstatuses", "", "ComponentStatus", false, "cs"),
		}}},
		{{gv: schema.GroupVersion{Group: "apps", Version: "v1"}, resources: []metav1.APIResource{
			res("deployments", "deployment", "Deployment", true, "deploy"), res("deployments/scale", "deployment", "Scale", true),
			res("controllerrevisions", "controllerrevision", "ControllerRevision", true),
		}}, {gv: schema.GroupVersion{Group: "apps", Version: "v1beta1"}, resources: []metav1.APIResource{
			res("deployments", "deployment", "Deployment", true, "deploy"), res("statefulsets", "statefulset", "StatefulSet", true, "sts"),
		}}},
		{{gv: schema.GroupVersion{Group: "example.com", Version: "v2"}, resources: []metav1.APIResource{
			res("gadgets", "gadget", "Gadget", false, "gd"), res("services", "service", "Service", true),
		}}, {gv: schema.GroupVersion{Group: "example.com", Version: "v1"}, resources: []metav1.APIResource{
			res("widgets", "widget", "Widget", false, "wg"), res("gadgets", "gadget", "Gadget", false, "gd"),
		}}},
		{{gv: schema.GroupVersion{Group: "other.io", Version: "v1"}, resources: []metav1.APIResource{
			res("dials", "dial", "Dial", true, "deploy", "dl"),
		}}},
		{{gv: schema.GroupVersion{Group: "broken.io", Version: "v1"}, broken: true, resources: []metav1.APIResource{
			res("knobs", "knob", "Knob", true, "kn"),
		}}, {gv: schema.GroupVersion{Group: "broken.io", Version: "v1alpha1"}, resources: []metav1.APIResource{
			res("levers", "lever", "Lever", true, "lv"),
		}}},
	}
}

// serve serves the fixture as legacy or aggregated discovery.
func serve(t *testing.T, aggregated bool) *httptest.Server {
	groups := fixture()
	write := func(w http.ResponseWriter, contentType string, v any) {
		w.Header().Set("Content-Type", contentType)
		if err := json.NewEncoder(w).Encode(v); err != nil {
			t.Error(err)
		}
	}
	aggregate := func(core bool) map[string]any {
		var items []any
		for _, g := range groups {
			if (g[0].gv.Group == "") != core {
				continue
			}
			var versions []any
			for _, v := range g {
				var rs []any
				for _, r := range v.resources {
					base, sub, isSub := strings.Cut(r.Name, "/")
					kind := map[string]string{"group": v.gv.Group, "version": v.gv.Version, "kind": r.Kind}
					if isSub {
						parent := rs[len(rs)-1].(map[string]any)
						if parent["resource"] != base {
							t.Fatalf("fixture: %s does not follow its resource", r.Name)
						}
						parent["subresources"] = append(parent["subresources"].([]any), map[string]any{"subresource": sub, "responseKind": kind, "verbs": r.Verbs})
						continue
					}
					scope := "Cluster"
					if r.Namespaced {
						scope = "Namespaced"
					}
					rs = append(rs, map[string]any{"resource": r.Name, "responseKind": kind, "scope": scope, "singularResource": r.SingularName,
						"verbs": r.Verbs, "shortNames": r.ShortNames, "subresources": []any{}})
				}
				// A resource without a kind is left out by both.
				rs = append(rs, map[string]any{"resource": "kindless", "scope": "Cluster", "verbs": []string{"get"}})
				fresh := "Current"
				if v.broken {
					fresh = "Stale"
				}
				versions = append(versions, map[string]any{"version": v.gv.Version, "resources": rs, "freshness": fresh})
			}
			items = append(items, map[string]any{"metadata": map[string]any{"name": g[0].gv.Group}, "versions": versions})
		}
		return map[string]any{"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "items": items}
	}
	const aggType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wantsAgg := aggregated && strings.Contains(r.Header.Get("Accept"), "as=APIGroupDiscoveryList")
		switch r.URL.Path {
		case "/api":
			if wantsAgg {
				write(w, aggType, aggregate(true))
				return
			}
			write(w, "application/json", metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
			return
		case "/apis":
			if wantsAgg {
				write(w, aggType, aggregate(false))
				return
			}
			list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
			for _, g := range groups[1:] {
				ag := metav1.APIGroup{Name: g[0].gv.Group}
				for _, v := range g {
					ag.Versions = append(ag.Versions, metav1.GroupVersionForDiscovery{GroupVersion: v.gv.String(), Version: v.gv.Version})
				}
				ag.PreferredVersion = ag.Versions[0]
				list.Groups = append(list.Groups, ag)
			}
			write(w, "application/json", list)
			return
		}
		for _, g := range groups {
			for _, v := range g {
				path := "/apis/" + v.gv.String()
				if v.gv.Group == "" {
					path = "/api/" + v.gv.Version
				}
				if r.URL.Path != path {
					continue
				}
				if v.broken {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusServiceUnavailable)
					w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":503,"reason":"ServiceUnavailable","message":"the server is currently unable to handle the request"}`))
					return
				}
				write(w, "application/json", metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
					GroupVersion: v.gv.String(), APIResources: v.resources})
				return
			}
		}
		http.NotFound(w, r)
	}))
}

// resolve is kube.Resolve's use of a mapper: the full form of name, else
// its partial form, then its kind and scope.
func resolve(ctx context.Context, m meta.RESTMapperWithContext, name string) string {
	full, partial := schema.ParseResourceArg(strings.ToLower(name))
	var gvr schema.GroupVersionResource
	found := false
	if full != nil {
		if r, err := m.ResourceForWithContext(ctx, *full); err == nil {
			gvr, found = r, true
		}
	}
	if !found {
		var err error
		if gvr, err = m.ResourceForWithContext(ctx, partial.WithVersion("")); err != nil {
			return "resource: " + err.Error()
		}
	}
	gvk, err := m.KindForWithContext(ctx, gvr)
	if err != nil {
		return "kind: " + err.Error()
	}
	mapping, err := m.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	if err != nil {
		return "mapping: " + err.Error()
	}
	return fmt.Sprintf("%v %v %s", gvr, gvk, mapping.Scope.Name())
}

// expanding is Document.Mapper with Document.Expand first, as kube.Resolve
// uses them.
type expanding struct {
	meta.RESTMapperWithContext
	doc *Document
}

func (m expanding) ResourceForWithContext(ctx context.Context, r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return m.RESTMapperWithContext.ResourceForWithContext(ctx, m.doc.Expand(r))
}

func (m expanding) KindForWithContext(ctx context.Context, r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return m.RESTMapperWithContext.KindForWithContext(ctx, m.doc.Expand(r))
}

// Every name resolves as through client-go's discovery and restmapper,
// from legacy and from aggregated discovery, with a broken group version
// and a resource without a kind in the way.
func TestResolvesAsClientGo(t *testing.T) {
	names := []string{
		"pods", "pod", "po", "Pod", "PODS", "pods.v1", "po.v1", "pods/status", "nodes", "no", "endpoints", "ep", "svc",
		"services", "services.example.com", "services.v2.example.com", "cs", "componentstatus", "componentstatuses",
		"deploy", "deployments", "deployments.apps", "deployments.v1.apps", "deployments.v1beta1.apps", "deployment.apps",
		"Deployment", "deploy.apps", "deploy.other.io", "deploy.other", "dl", "sts", "statefulsets", "statefulsets.v1.apps",
		"widgets", "wg", "widget.example.com", "wg.example", "wg.example.com", "gadgets", "gd", "gadgets.v1.example.com",
		"gadgets.v2.example.com", "gd.v1.example.com", "knobs", "kn", "levers", "lv", "lever.broken.io",
		"kindless", "unknown", "pods.example.com", "scale", "list", "podlist",
	}
	for _, aggregated := range []bool{false, true} {
		t.Run(fmt.Sprintf("aggregated=%v", aggregated), func(t *testing.T) {
			srv := serve(t, aggregated)
			defer srv.Close()
			// client-go reads discovery again at every short-name expansion:
			// no client-side rate limit, or it waits seconds for each.
			cfg := &rest.Config{Host: srv.URL, QPS: 1e6, Burst: 1e6}
			ctx := t.Context()

			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer hc.CloseIdleConnections()
			dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
			if err != nil {
				t.Fatal(err)
			}
			groups, err := restmapper.GetAPIGroupResourcesWithContext(ctx, dc)
			if err != nil {
				t.Fatal(err)
			}
			theirs := restmapper.NewShortcutExpanderWithContext(restmapper.NewDiscoveryRESTMapperWithContext(groups), dc, nil)

			client, err := Client(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Client.CloseIdleConnections()
			doc, err := Read(ctx, client)
			if doc == nil {
				t.Fatal(err)
			}
			if _, ok := err.(*PartialError); !ok || !strings.Contains(err.Error(), "broken.io/v1: ") {
				t.Errorf("Read: %v, want broken.io/v1 failed", err)
			}
			ours := expanding{doc.Mapper(), doc}
			for _, name := range names {
				if aggregated && (name == "deploy" || name == "deploy.other") {
					continue // client-go ranks short names in map order from aggregated discovery
				}
				if got, want := resolve(ctx, ours, name), resolve(ctx, theirs, name); got != want {
					t.Errorf("%q: %s\nclient-go: %s", name, got, want)
				}
			}
		})
	}
}

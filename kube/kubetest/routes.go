package kubetest

import (
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// apiRequest is a request of the resource API, as parsed from its path.
type apiRequest struct {
	// verb is the API verb (get, list, watch, create, update, patch,
	// delete), or the HTTP method in lower case outside the resource API.
	verb      string
	res       *resource // nil outside the resource API
	namespace string
	name      string
	// sub is the subresource: "status", or "".
	sub string
}

// parse reads a request's path as kube-apiserver routes it:
// /api/v1/[namespaces/NS/]RESOURCE[/NAME[/status]] and the same under
// /apis/GROUP/VERSION. Other paths are outside the resource API (verb is
// the method). A path of the resource API that names nothing served is an
// error: 404 Not Found, or 405 for a verb the server does not serve.
func (s *Server) parse(r *http.Request) (apiRequest, error) {
	seg := trimPath(r.URL.Path)
	var gv schema.GroupVersion
	switch {
	case len(seg) >= 3 && seg[0] == "api":
		gv, seg = schema.GroupVersion{Version: seg[1]}, seg[2:]
	case len(seg) >= 4 && seg[0] == "apis":
		gv, seg = schema.GroupVersion{Group: seg[1], Version: seg[2]}, seg[3:]
	default:
		return apiRequest{verb: strings.ToLower(r.Method)}, nil
	}
	var req apiRequest
	if len(seg) >= 3 && seg[0] == "namespaces" {
		if _, ok := s.reg.byGVR[gv.WithResource(seg[2])]; ok {
			req.namespace, seg = seg[1], seg[2:]
		}
	}
	if len(seg) > 1 {
		req.name = seg[1]
	}
	if len(seg) > 2 {
		req.sub = seg[2]
	}
	req.verb = verbOf(r, req.name != "")
	notFound := apierrors.NewNotFound(gv.WithResource(seg[0]).GroupResource(), req.name)
	notFound.ErrStatus.Message = "the server could not find the requested resource"
	res, ok := s.reg.byGVR[gv.WithResource(seg[0])]
	switch {
	case !ok, len(seg) > 3, req.sub != "" && req.sub != "status",
		res.namespaced && req.namespace == "" && (req.name != "" || req.verb == "create"),
		!res.namespaced && req.namespace != "":
		return req, notFound
	}
	req.res = res
	switch {
	case req.verb == "deletecollection":
		return req, apierrors.NewMethodNotSupported(res.groupResource(), req.verb)
	case req.name == "" && req.verb != "list" && req.verb != "watch" && req.verb != "create",
		req.name != "" && (req.verb == "create" || req.verb == "list"):
		return req, apierrors.NewMethodNotSupported(res.groupResource(), req.verb)
	}
	return req, nil
}

// verbOf names a resource request's verb from its method and whether it
// names an object.
func verbOf(r *http.Request, named bool) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case named:
			return "get"
		case r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1":
			return "watch"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return strings.ToLower(r.Method)
}

// serveNonResource answers discovery (/api, /apis, /api/v1, /apis/G,
// /apis/G/V), /version and the health checks (/healthz, /livez, /readyz).
func (s *Server) serveNonResource(w http.ResponseWriter, r *http.Request) {
	seg := trimPath(r.URL.Path)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, apierrors.NewMethodNotSupported(schema.GroupResource{}, strings.ToLower(r.Method)))
		return
	}
	var obj runtime.Object
	switch {
	case len(seg) >= 1 && (seg[0] == "healthz" || seg[0] == "livez" || seg[0] == "readyz"):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("ok"))
		return
	case len(seg) == 1 && seg[0] == "version":
		obj = serverVersion()
	case len(seg) == 1 && seg[0] == "api":
		obj = &metav1.APIVersions{
			TypeMeta:                   metav1.TypeMeta{Kind: "APIVersions"},
			Versions:                   []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}},
		}
	case len(seg) == 1 && seg[0] == "apis":
		l := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "APIGroupList"}}
		for _, g := range s.reg.groups {
			if g.name != "" {
				l.Groups = append(l.Groups, discoveryGroup(g))
			}
		}
		obj = l
	case len(seg) == 2 && seg[0] == "apis":
		if g, ok := s.reg.group(seg[1]); ok && g.name != "" {
			dg := discoveryGroup(g)
			dg.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "APIGroup"}
			obj = &dg
		}
	case len(seg) == 2 && seg[0] == "api":
		obj = s.resourceList("", seg[1])
	case len(seg) == 3 && seg[0] == "apis":
		obj = s.resourceList(seg[1], seg[2])
	}
	if obj == nil {
		notFound := apierrors.NewNotFound(schema.GroupResource{}, "")
		notFound.ErrStatus.Message = "the server could not find the requested resource"
		writeError(w, notFound)
		return
	}
	writeObject(w, http.StatusOK, format{}, obj)
}

func discoveryGroup(g *apiGroup) metav1.APIGroup {
	d := metav1.APIGroup{Name: g.name}
	for _, v := range g.versions {
		d.Versions = append(d.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g.name + "/" + v, Version: v})
	}
	d.PreferredVersion = d.Versions[0]
	return d
}

// resourceList is the discovery document of one group version, nil when
// nothing is served there.
func (s *Server) resourceList(group, v string) runtime.Object {
	g, ok := s.reg.group(group)
	if !ok || len(g.resources[v]) == 0 {
		return nil
	}
	gv := schema.GroupVersion{Group: group, Version: v}
	l := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "APIResourceList"}, GroupVersion: gv.String()}
	for _, res := range g.resources[v] {
		l.APIResources = append(l.APIResources, metav1.APIResource{
			Name:         res.gvr.Resource,
			SingularName: strings.ToLower(res.gvk.Kind),
			Namespaced:   res.namespaced,
			Kind:         res.gvk.Kind,
			Verbs:        metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"},
			ShortNames:   res.shortNames,
		})
	}
	return l
}

// serverVersion is what /version answers: the Kubernetes release of the
// k8s.io/api module the server was built with (v0.37.2 serves v1.37.2).
func serverVersion() runtime.Object {
	v := version.Info{Major: "1", Minor: "0", GitVersion: "v1.0.0", Platform: "kubetest"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			var minor, patch int
			if m.Path != "k8s.io/api" {
				continue
			}
			if _, err := fmt.Sscanf(m.Version, "v0.%d.%d", &minor, &patch); err == nil {
				v.Minor, v.GitVersion = fmt.Sprint(minor), fmt.Sprintf("v1.%d.%d", minor, patch)
			}
		}
	}
	return &versionInfo{Info: v}
}

// versionInfo is version.Info as a runtime.Object, for writeObject.
type versionInfo struct{ version.Info }

func (v *versionInfo) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (v *versionInfo) DeepCopyObject() runtime.Object   { c := *v; return &c }

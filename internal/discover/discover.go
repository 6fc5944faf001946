// Package discover reads a kube-apiserver's discovery, its API groups and
// the resources of each group version, and maps what a user types onto
// them: the job of client-go's discovery and restmapper packages, which
// kube.Resolve used before. Those packages link client-go's
// kubernetes/scheme (every API group, each registering its types at init),
// most of an idle process's resident set: process-baseline-rss in bench/
// (cmd/baseline) is the benchmark that pays for this package.
//
// What it reads and answers is what client-go's would: aggregated
// discovery (apidiscovery.k8s.io/v2) when the server serves it, else the
// legacy documents (/api, /apis, then each group version); a group version
// that fails leaves the others usable; the core group comes first, then
// each group's preferred version.
package discover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/internal/metacodec"
)

// accept asks for aggregated discovery, or the legacy documents.
const accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

// Group is one API group and the resources of each of its versions that
// answered (a version that did not is missing from Resources).
type Group struct {
	metav1.APIGroup
	Resources map[string][]metav1.APIResource
}

// Document is a server's discovery: its groups in the server's order, the
// core group first, and the resource lists of every group version that
// answered, in the same order.
type Document struct {
	Groups []Group
	Lists  []*metav1.APIResourceList
}

// PartialError says which group versions failed; the document still
// holds the others.
type PartialError struct {
	Failed map[schema.GroupVersion]error
}

func (e *PartialError) Error() string {
	var parts []string
	for gv, err := range e.Failed {
		parts = append(parts, fmt.Sprintf("%s: %v", gv, err))
	}
	sort.Strings(parts)
	return "unable to retrieve the complete list of server APIs: " + strings.Join(parts, ", ")
}

// Client returns the client Read asks through: cfg (copied) with
// discovery's defaults (a 32 s timeout and a burst of 300 when unset).
// Its caller closes its idle connections when done.
func Client(cfg *rest.Config) (*rest.RESTClient, error) {
	rc := rest.CopyConfig(cfg)
	rc.APIPath = ""
	rc.GroupVersion = nil
	rc.NegotiatedSerializer = metacodec.Serializer
	if rc.Timeout == 0 {
		rc.Timeout = 32 * time.Second
	}
	if rc.Burst == 0 {
		rc.Burst = 300 // one request per group version, at once
	}
	if rc.UserAgent == "" {
		rc.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.UnversionedRESTClientFor(rc)
}

// Read reads the discovery of client's server. A failure of some group
// versions is retried once, then returned as a *PartialError beside the
// document; any other failure returns no document.
func Read(ctx context.Context, client *rest.RESTClient) (*Document, error) {
	var doc *Document
	var err error
	for range 2 {
		doc, err = read(ctx, client)
		var partial *PartialError
		if err == nil || !errors.As(err, &partial) || ctx.Err() != nil {
			break
		}
	}
	return doc, err
}

// read reads the discovery once.
func read(ctx context.Context, client *rest.RESTClient) (*Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	failed := map[schema.GroupVersion]error{}
	core, coreLists, err := readRoot(ctx, client, "/api", failed)
	if apierrors.IsNotFound(err) {
		core, coreLists, err = nil, map[schema.GroupVersion]*metav1.APIResourceList{}, nil
	}
	if err != nil {
		return nil, err
	}
	groups, lists, err := readRoot(ctx, client, "/apis", failed)
	if err != nil {
		return nil, err
	}
	groups = append(core, groups...)
	if coreLists == nil || lists == nil {
		// Legacy discovery: ask each group version (only their failures
		// count, as in client-go).
		failed = map[schema.GroupVersion]error{}
		lists = readVersions(ctx, client, groups, failed)
	} else {
		for gv, l := range coreLists {
			lists[gv] = l
		}
	}
	doc := &Document{}
	for _, g := range groups {
		dg := Group{APIGroup: g, Resources: map[string][]metav1.APIResource{}}
		for _, v := range g.Versions {
			l, ok := lists[schema.GroupVersion{Group: g.Name, Version: v.Version}]
			if !ok {
				continue
			}
			dg.Resources[v.Version] = l.APIResources
			doc.Lists = append(doc.Lists, l)
		}
		doc.Groups = append(doc.Groups, dg)
	}
	if len(failed) > 0 {
		return doc, &PartialError{Failed: failed}
	}
	return doc, nil
}

// readRoot reads /api or /apis: the groups, and, when the server answers
// with aggregated discovery, their resources (nil lists: it did not). A
// stale group version of an aggregated answer goes to failed.
func readRoot(ctx context.Context, client *rest.RESTClient, path string, failed map[schema.GroupVersion]error) ([]metav1.APIGroup, map[schema.GroupVersion]*metav1.APIResourceList, error) {
	var contentType string
	body, err := client.Get().AbsPath(path).SetHeader("Accept", accept).Do(ctx).ContentType(&contentType).Raw()
	if err != nil {
		return nil, nil, err
	}
	if isAggregated(contentType) {
		var agg aggregatedList
		if err := json.Unmarshal(body, &agg); err != nil {
			return nil, nil, err
		}
		groups, lists := agg.split(failed)
		return groups, lists, nil
	}
	if path == "/api" {
		var v metav1.APIVersions
		if err := json.Unmarshal(body, &v); err != nil {
			return nil, nil, err
		}
		g := metav1.APIGroup{}
		for _, ver := range v.Versions {
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: ver, Version: ver})
		}
		if len(g.Versions) > 0 {
			g.PreferredVersion = g.Versions[0] // /api serves one version
		}
		return []metav1.APIGroup{g}, nil, nil
	}
	var l metav1.APIGroupList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, nil, err
	}
	return l.Groups, nil, nil
}

// isAggregated tells whether a response's media type is aggregated
// discovery.
func isAggregated(contentType string) bool {
	base, params, err := mime.ParseMediaType(contentType)
	return err == nil && base == "application/json" &&
		params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" && params["as"] == "APIGroupDiscoveryList"
}

// readVersions asks every version of groups for its resources, all at
// once, and waits for the answers. A failure goes to failed, except a 404
// of the core v1, which reads as no resources.
func readVersions(ctx context.Context, client *rest.RESTClient, groups []metav1.APIGroup, failed map[schema.GroupVersion]error) map[schema.GroupVersion]*metav1.APIResourceList {
	lists := map[schema.GroupVersion]*metav1.APIResourceList{}
	var mu sync.Mutex // guards lists and failed while the requests run
	var wg sync.WaitGroup
	for _, g := range groups {
		for _, v := range g.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			wg.Go(func() {
				l, err := readVersion(ctx, client, gv)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed[gv] = err
				}
				if l != nil {
					lists[gv] = l
				}
			})
		}
	}
	wg.Wait()
	return lists
}

// readVersion reads one group version's resources.
func readVersion(ctx context.Context, client *rest.RESTClient, gv schema.GroupVersion) (*metav1.APIResourceList, error) {
	path := "/apis/" + gv.String()
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	l := &metav1.APIResourceList{GroupVersion: gv.String()}
	res := client.Get().AbsPath(path).Do(ctx)
	if err := res.Error(); err != nil {
		if gv.Group == "" && gv.Version == "v1" && apierrors.IsNotFound(err) {
			return l, nil
		}
		return nil, err
	}
	body, _ := res.Raw()
	if err := json.Unmarshal(body, l); err != nil {
		return nil, err
	}
	return l, nil
}

// aggregatedList is the part of apidiscovery.k8s.io/v2's
// APIGroupDiscoveryList that discovery needs.
type aggregatedList struct {
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Versions []struct {
			Version   string `json:"version"`
			Freshness string `json:"freshness"`
			Resources []struct {
				Resource         string                   `json:"resource"`
				ResponseKind     *metav1.GroupVersionKind `json:"responseKind"`
				Scope            string                   `json:"scope"`
				SingularResource string                   `json:"singularResource"`
				Verbs            []string                 `json:"verbs"`
				ShortNames       []string                 `json:"shortNames"`
				Categories       []string                 `json:"categories"`
				Subresources     []struct {
					Subresource  string                   `json:"subresource"`
					ResponseKind *metav1.GroupVersionKind `json:"responseKind"`
					Verbs        []string                 `json:"verbs"`
				} `json:"subresources"`
			} `json:"resources"`
		} `json:"versions"`
	} `json:"items"`
}

// split turns an aggregated answer into groups (the first version
// preferred) and the resource list of each fresh version; stale versions
// go to failed. A resource or subresource without a kind is left out.
func (a *aggregatedList) split(failed map[schema.GroupVersion]error) ([]metav1.APIGroup, map[schema.GroupVersion]*metav1.APIResourceList) {
	groups := make([]metav1.APIGroup, 0, len(a.Items))
	lists := map[schema.GroupVersion]*metav1.APIResourceList{}
	for _, item := range a.Items {
		g := metav1.APIGroup{Name: item.Metadata.Name}
		for _, v := range item.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			if v.Freshness == "Stale" {
				failed[gv] = fmt.Errorf("stale GroupVersion discovery: %v", gv)
				continue
			}
			ver := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: v.Version}
			g.Versions = append(g.Versions, ver)
			if g.PreferredVersion == (metav1.GroupVersionForDiscovery{}) {
				g.PreferredVersion = ver
			}
			l := &metav1.APIResourceList{GroupVersion: gv.String()}
			for _, r := range v.Resources {
				res := metav1.APIResource{Name: r.Resource, SingularName: r.SingularResource,
					Namespaced: r.Scope == "Namespaced", Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories}
				ok := r.ResponseKind != nil && *r.ResponseKind != (metav1.GroupVersionKind{})
				if ok {
					res.Group, res.Version, res.Kind = r.ResponseKind.Group, r.ResponseKind.Version, r.ResponseKind.Kind
					l.APIResources = append(l.APIResources, res)
				}
				for _, sub := range r.Subresources {
					if sub.ResponseKind == nil || *sub.ResponseKind == (metav1.GroupVersionKind{}) {
						continue
					}
					l.APIResources = append(l.APIResources, metav1.APIResource{
						Name: r.Resource + "/" + sub.Subresource, SingularName: res.SingularName, Namespaced: res.Namespaced,
						Group: sub.ResponseKind.Group, Version: sub.ResponseKind.Version, Kind: sub.ResponseKind.Kind, Verbs: sub.Verbs})
				}
			}
			lists[gv] = l
		}
		groups = append(groups, g)
	}
	return groups, lists
}

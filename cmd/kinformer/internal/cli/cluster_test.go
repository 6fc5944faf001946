package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// fakeCluster serves a cluster's discovery documents (pods, namespaces and
// configmaps in v1, deployments in apps/v1) and passes every other request
// to handler; it returns global options whose kubeconfig points at it. The
// server and its connections are closed at the end of the test.
func fakeCluster(t testing.TB, handler http.HandlerFunc) *GlobalOptions {
	t.Helper()
	verbs := metav1.Verbs{"get", "list", "watch"}
	docs := map[string]any{
		"/api": &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}},
		"/apis": &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{
			{Name: "apps", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "apps/v1", Version: "v1"}},
				PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "apps/v1", Version: "v1"}}}},
		"/api/v1": &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1",
			APIResources: []metav1.APIResource{
				{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: verbs, ShortNames: []string{"po"}},
				{Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap", Verbs: verbs, ShortNames: []string{"cm"}},
				{Name: "namespaces", SingularName: "namespace", Kind: "Namespace", Verbs: verbs, ShortNames: []string{"ns"}},
			}},
		"/apis/apps/v1": &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "apps/v1",
			APIResources: []metav1.APIResource{
				{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", Verbs: verbs, ShortNames: []string{"deploy"}},
			}},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if doc, ok := docs[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(doc)
			return
		}
		handler(w, r)
	}))
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: %q}}]
contexts: [{name: fake, context: {cluster: fake, user: fake, namespace: default}}]
users: [{name: fake, user: {}}]
current-context: fake
`, srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		if c, err := rest.HTTPClientFor(&rest.Config{Host: srv.URL}); err == nil {
			utilnet.CloseIdleConnectionsFor(c.Transport)
		}
	})
	return &GlobalOptions{Kubeconfig: kubeconfig, Now: func() time.Time { return testNow }}
}

// metadataList answers a list with the metadata of objects in these
// namespaces (one each, named after it, with its uid), ignoring any shard
// selector, as a server without the ShardedListAndWatch gate does.
func metadataList(namespaces []string, uids []types.UID) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		list := metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadataList", APIVersion: "meta.k8s.io/v1"},
			ListMeta: metav1.ListMeta{ResourceVersion: "100"}}
		for i, ns := range namespaces {
			list.Items = append(list.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
				Namespace: ns, Name: "o-" + ns, UID: uids[i], ResourceVersion: "1"}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&list)
	}
}

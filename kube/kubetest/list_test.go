package kubetest_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/kube/kubetest"
	"github.com/kinformer/kinformer/listwatch"
)

func names(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Namespace + "/" + p.Name
	}
	return out
}

// Pages are in namespace/name order, pinned to the first page's version:
// a pod created between pages is not in them.
func TestListPagesFromOneSnapshot(t *testing.T) {
	var objs []runtime.Object
	for _, n := range []string{"b/2", "a/3", "b/1", "a/1", "c/1"} {
		objs = append(objs, pod(n[:1], n[2:], nil))
	}
	srv := kubetest.New(t, kubetest.Options{Objects: objs})
	c := ctx(t)
	src, err := kube.Source[*corev1.Pod](c, srv.Config(), kube.SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var rvs []string
	opts := listwatch.Options{Limit: 2}
	for i := 0; ; i++ {
		page, err := src.List(c, opts)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, names(page.Items)...)
		rvs = append(rvs, page.ResourceVersion)
		if i == 0 {
			if page.RemainingItemCount == nil || *page.RemainingItemCount != 3 {
				t.Errorf("first page's remaining item count %v, want 3", page.RemainingItemCount)
			}
			if err := srv.Create(pod("a", "2", nil)); err != nil { // sorts into the second page
				t.Fatal(err)
			}
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	if want := []string{"a/1", "a/3", "b/1", "b/2", "c/1"}; !slices.Equal(got, want) {
		t.Errorf("paged list %v, want %v", got, want)
	}
	if rvs[0] != rvs[1] || rvs[1] != rvs[2] {
		t.Errorf("pages at versions %v, want one version", rvs)
	}
	full, err := src.List(c, listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Items) != 6 || full.ResourceVersion == rvs[0] {
		t.Errorf("list after the create: %v at %s, want 6 pods at a newer version than %s", names(full.Items), full.ResourceVersion, rvs[0])
	}
}

func TestListSelectors(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{Objects: []runtime.Object{
		pod("shop", "web-1", map[string]string{"app": "web", "tier": "front"}),
		pod("shop", "web-2", map[string]string{"app": "web"}),
		pod("shop", "db-1", map[string]string{"app": "db"}),
		pod("blog", "web-1", map[string]string{"app": "web"}),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{"app": "web"}}},
	}})
	c := ctx(t)
	for _, tc := range []struct {
		sel  kube.Selection
		want []string
	}{
		{kube.Selection{}, []string{"blog/web-1", "shop/db-1", "shop/web-1", "shop/web-2"}},
		{kube.Selection{Namespace: "shop"}, []string{"shop/db-1", "shop/web-1", "shop/web-2"}},
		{kube.Selection{LabelSelector: "app=web"}, []string{"blog/web-1", "shop/web-1", "shop/web-2"}},
		{kube.Selection{LabelSelector: "app in (web,db),tier!=front"}, []string{"blog/web-1", "shop/db-1", "shop/web-2"}},
		{kube.Selection{LabelSelector: "tier"}, []string{"shop/web-1"}},
		{kube.Selection{FieldSelector: "metadata.name=web-1"}, []string{"blog/web-1", "shop/web-1"}},
		{kube.Selection{FieldSelector: "metadata.namespace!=shop"}, []string{"blog/web-1"}},
		{kube.Selection{FieldSelector: "spec.nodeName=node-db-1"}, []string{"shop/db-1"}},
		{kube.Selection{Namespace: "blog", LabelSelector: "app=web", FieldSelector: "metadata.name=web-1"}, []string{"blog/web-1"}},
	} {
		t.Run(tc.sel.String(), func(t *testing.T) {
			src, err := kube.Source[*corev1.Pod](c, srv.Config(), kube.SourceOptions{Selection: tc.sel})
			if err != nil {
				t.Fatal(err)
			}
			page, err := src.List(c, listwatch.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(page.Items); !slices.Equal(got, tc.want) {
				t.Errorf("list %v, want %v", got, tc.want)
			}
		})
	}
}

func TestListRefusesUnsupportedFieldSelector(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{})
	c := ctx(t)
	_, err := clientset(t, srv).CoreV1().ConfigMaps("").List(c, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("configmaps by spec.nodeName: %v, want 400 Bad Request", err)
	}
	_, err = clientset(t, srv).CoreV1().Pods("").List(c, metav1.ListOptions{FieldSelector: "spec.nodeName=n1,status.phase=Running"})
	if err != nil {
		t.Errorf("pods by spec.nodeName and status.phase: %v", err)
	}
}

// Resource versions, as kube-apiserver reads them: an exact version is the
// state then; a newer one than the server's is "too large"; one older than
// the compaction point, or a continue token from before it, is 410.
func TestListResourceVersions(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{Objects: []runtime.Object{pod("ns", "a", nil), pod("ns", "b", nil)}})
	c := ctx(t)
	src, err := kube.Source[*corev1.Pod](c, srv.Config(), kube.SourceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := srv.ResourceVersion()
	first, err := src.List(c, listwatch.Options{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Delete(pod("ns", "a", nil)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Create(pod("ns", "c", nil)); err != nil {
		t.Fatal(err)
	}

	at, err := src.List(c, listwatch.Options{ResourceVersion: before, ResourceVersionMatch: listwatch.MatchExact})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(at.Items); !slices.Equal(got, []string{"ns/a", "ns/b"}) || at.ResourceVersion != before {
		t.Errorf("exact list at %s: %v at %s, want [ns/a ns/b] then", before, got, at.ResourceVersion)
	}
	now, err := src.List(c, listwatch.Options{ResourceVersion: before, ResourceVersionMatch: listwatch.MatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(now.Items); !slices.Equal(got, []string{"ns/b", "ns/c"}) || now.ResourceVersion != srv.ResourceVersion() {
		t.Errorf("list not older than %s: %v at %s, want [ns/b ns/c] at %s", before, got, now.ResourceVersion, srv.ResourceVersion())
	}
	_, err = src.List(c, listwatch.Options{ResourceVersion: "1000", ResourceVersionMatch: listwatch.MatchExact})
	if !errors.Is(err, listwatch.ErrTooLargeResourceVersion) {
		t.Errorf("list at a future version: %v, want ErrTooLargeResourceVersion", err)
	}

	srv.Compact()
	_, err = src.List(c, listwatch.Options{ResourceVersion: before, ResourceVersionMatch: listwatch.MatchExact})
	if !errors.Is(err, listwatch.ErrExpired) {
		t.Errorf("exact list at %s after Compact: %v, want ErrExpired", before, err)
	}
	_, err = src.List(c, listwatch.Options{Limit: 1, Continue: first.Continue})
	if !errors.Is(err, listwatch.ErrExpired) {
		t.Errorf("continue token after Compact: %v, want ErrExpired", err)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != http.StatusGone {
		t.Errorf("continue token after Compact: %v, want a 410 Status", err)
	}
}

// The server validates list parameters as kube-apiserver does.
func TestListRefusesInvalidParameters(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{})
	c := ctx(t)
	pods := clientset(t, srv).CoreV1().Pods("")
	for _, opts := range []metav1.ListOptions{
		{ResourceVersionMatch: metav1.ResourceVersionMatchExact},                       // no version
		{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, // exact 0
		{ResourceVersion: "1", ResourceVersionMatch: "Newest"},
	} {
		_, err := pods.List(c, opts)
		if !apierrors.IsInvalid(err) {
			t.Errorf("list %+v: %v, want 422 Invalid", opts, err)
		}
	}
	_, err := pods.List(c, metav1.ListOptions{LabelSelector: "a=(b"})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("list with a broken selector: %v, want 400 Bad Request", err)
	}
}

// A list in protobuf (what typed clients ask for) and in JSON hold the
// same objects.
func TestListFormats(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{Objects: []runtime.Object{pod("ns", "a", map[string]string{"x": "y"})}})
	c := ctx(t)
	for _, accept := range []string{"application/vnd.kubernetes.protobuf", "application/json"} {
		cfg := srv.Config()
		cfg.AcceptContentTypes = accept
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		l, err := cs.CoreV1().Pods("ns").List(c, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("%s: %v", accept, err)
		}
		if len(l.Items) != 1 || l.Items[0].Labels["x"] != "y" || l.Items[0].Spec.NodeName != "node-a" {
			t.Errorf("%s: list %+v", accept, l.Items)
		}
		last := srv.Requests()[len(srv.Requests())-1]
		if last.Verb != "list" || last.Code != http.StatusOK || last.Accept != accept {
			t.Errorf("last request %+v, want a list accepting %s answered 200", last, accept)
		}
	}
}

package kube

import (
	"context"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
)

// listVersion lists src once and returns the page's version and length.
func listVersion[T cache.Object](t *testing.T, src listwatch.ListerWatcher[T], err error) (string, int, error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	page, err := src.List(context.Background(), listwatch.Options{})
	return page.ResourceVersion, len(page.Items), err
}

// A JSON list whose items are null, or absent, is an empty list, as
// apimachinery reads it, on every kind of source.
func TestEverySourceReadsANullOrAbsentItemsListAsEmpty(t *testing.T) {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	for _, body := range []struct{ name, pods, widgets string }{
		{"null", `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":null}`,
			`{"kind":"WidgetList","apiVersion":"example.com/v1","metadata":{"resourceVersion":"5"},"items":null}`},
		{"absent", `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"}}`,
			`{"kind":"WidgetList","apiVersion":"example.com/v1","metadata":{"resourceVersion":"5"}}`},
		{"metadata list", `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},"items":null}`, ""},
	} {
		cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com":
				writeBody(w, mediaJSON, []byte(widgetCRD))
			case "/apis/example.com/v1/namespaces/ns/widgets":
				writeBody(w, mediaJSON, []byte(body.widgets))
			default:
				writeBody(w, mediaJSON, []byte(body.pods))
			}
		})
		for _, src := range []struct {
			name string
			list func() (string, int, error)
		}{
			{"typed", func() (string, int, error) {
				lw, err := Source[*corev1.Pod](t.Context(), cfg, SourceOptions{})
				return listVersion(t, lw, err)
			}},
			{"metadata", func() (string, int, error) {
				lw, err := Source[*metav1.PartialObjectMetadata](t.Context(), cfg, SourceOptions{Resource: Resource{GVR: pods}})
				return listVersion(t, lw, err)
			}},
			{"dynamic", func() (string, int, error) {
				lw, err := Source[*unstructured.Unstructured](t.Context(), cfg, SourceOptions{Resource: Resource{GVR: pods}})
				return listVersion[*unstructured.Unstructured](t, lw, err)
			}},
			{"view", func() (string, int, error) {
				lw, err := Source[*testPodView](t.Context(), cfg, SourceOptions{})
				return listVersion(t, lw, err)
			}},
			{"dynamic view", func() (string, int, error) {
				lw, err := Source[*widgetView](t.Context(), cfg, SourceOptions{Resource: widgets, Selection: Selection{Namespace: "ns"}})
				return listVersion(t, lw, err)
			}},
		} {
			if body.widgets == "" && src.name != "metadata" {
				continue
			}
			rv, n, err := src.list()
			if err != nil || rv != "5" || n != 0 {
				t.Errorf("%s items, %s source: version %q, %d items, %v; want version 5, no items", body.name, src.name, rv, n, err)
			}
		}
	}
}

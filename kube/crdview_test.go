package kube

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/listwatch"
)

// widgetView is a view of the custom resource the CRD below defines.
type widgetView struct {
	ViewMeta
	Size  int64             `kube:"spec.size"`
	Color string            `kube:"spec.color"`
	Tags  map[string]string `kube:"spec.tags"`
	Ready bool              `kube:"status.ready"`
	Extra string            `kube:"spec.free.anything"` // below preserve-unknown-fields
}

const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"widgets.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced",
  "names":{"plural":"widgets","kind":"Widget"},
  "versions":[
   {"name":"v1alpha1","served":false,"storage":false,"schema":{"openAPIV3Schema":{"type":"object"}}},
   {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
    "spec":{"type":"object","properties":{
     "size":{"type":"integer"},"color":{"type":"string"},
     "tags":{"type":"object","additionalProperties":{"type":"string"}},
     "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
     "big":{"type":"string"}}},
    "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}}}]}}`

const widgetList = `{"apiVersion":"example.com/v1","kind":"WidgetList","metadata":{"resourceVersion":"7"},"items":[
 {"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"ns","uid":"u-a","resourceVersion":"5","labels":{"app":"x"}},
  "spec":{"size":3,"color":"red","tags":{"t":"1"},"free":{"anything":"yes","other":[1,2]},"big":"` + "not read" + `"},"status":{"ready":true}},
 {"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"b","namespace":"ns","resourceVersion":"6"},"spec":{"size":1}}]}`

var widgets = Resource{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Kind: "Widget", Namespaced: true}

// crdServer serves the widget CRD (unless crd is ""), a list of widgets
// and a watch with one added widget, recording the paths asked for.
func crdServer(t *testing.T, crd string, paths *[]string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		*paths = append(*paths, r.URL.Path)
		switch {
		case r.URL.Path == "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com":
			if crd == "" {
				writeStatus(t, w, &metav1.Status{Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound})
				return
			}
			writeBody(w, mediaJSON, []byte(crd))
		case r.URL.Path == "/apis/example.com/v1/namespaces/ns/widgets" && r.URL.Query().Get("watch") == "":
			if !strings.Contains(r.Header.Get("Accept"), "json") || strings.Contains(r.Header.Get("Accept"), "protobuf") {
				t.Errorf("list Accept %q, want JSON only", r.Header.Get("Accept"))
			}
			writeBody(w, mediaJSON, []byte(widgetList))
		default:
			http.NotFound(w, r)
		}
	}
}

func TestDynamicViewDecodesCustomResourcesIntoTheView(t *testing.T) {
	var paths []string
	cfg := fakeServer(t, crdServer(t, widgetCRD, &paths))
	src, err := Source[*widgetView](t.Context(), cfg, SourceOptions{Resource: widgets, Selection: Selection{Namespace: "ns"}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := src.List(t.Context(), listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 2 || page.ResourceVersion != "7" {
		t.Fatalf("page %+v", page)
	}
	a := page.Items[0]
	if a.Name != "a" || a.Namespace != "ns" || a.UID != "u-a" || a.ResourceVersion != "5" || a.Labels.Get("app") != "x" ||
		a.Size != 3 || a.Color != "red" || a.Tags["t"] != "1" || !a.Ready || a.Extra != "yes" {
		t.Errorf("widget a: %+v", a)
	}
	if b := page.Items[1]; b.Name != "b" || b.Size != 1 || b.Color != "" || b.Ready {
		t.Errorf("widget b: %+v", b)
	}
}

func TestDynamicViewChecksTheViewAgainstTheCRDSchema(t *testing.T) {
	type bogus struct {
		ViewMeta
		Size string `kube:"spec.size"` // an integer in the schema
	}
	type missing struct {
		ViewMeta
		Weight int64 `kube:"spec.weight"`
	}
	var paths []string
	cfg := fakeServer(t, crdServer(t, widgetCRD, &paths))
	if _, err := Source[*missing](t.Context(), cfg, SourceOptions{Resource: widgets}); !errors.Is(err, ErrInvalidView) ||
		!strings.Contains(err.Error(), "spec.weight") || !strings.Contains(err.Error(), "Weight") {
		t.Errorf("a path the schema does not have: %v", err)
	}
	if _, err := Source[*bogus](t.Context(), cfg, SourceOptions{Resource: widgets}); !errors.Is(err, ErrInvalidView) ||
		!strings.Contains(err.Error(), "spec.size") {
		t.Errorf("a field that cannot hold the schema's type: %v", err)
	}
	v1alpha1 := widgets
	v1alpha1.GVR.Version = "v1alpha1"
	if _, err := Source[*widgetView](t.Context(), cfg, SourceOptions{Resource: v1alpha1}); !errors.Is(err, ErrNoSchema) ||
		!strings.Contains(err.Error(), "not served") {
		t.Errorf("a version not served: %v", err)
	}
	v2 := widgets
	v2.GVR.Version = "v2"
	if _, err := Source[*widgetView](t.Context(), cfg, SourceOptions{Resource: v2}); !errors.Is(err, ErrNoSchema) {
		t.Errorf("a version the CRD does not have: %v", err)
	}
	core := Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}
	if _, err := Source[*widgetView](t.Context(), cfg, SourceOptions{Resource: core}); !errors.Is(err, ErrNoSchema) ||
		!strings.Contains(err.Error(), "kube.ViewOf") {
		t.Errorf("a core resource: %v", err)
	}
}

func TestDynamicViewOfAnUnknownResource(t *testing.T) {
	var paths []string
	cfg := fakeServer(t, crdServer(t, "", &paths))
	_, err := Source[*widgetView](t.Context(), cfg, SourceOptions{Resource: widgets})
	if !errors.Is(err, ErrNoSchema) || !strings.Contains(err.Error(), "widgets.example.com") {
		t.Fatalf("no CRD: %v", err)
	}
}

func TestDynamicViewReportsAMalformedCRDAndAnUnreachableServer(t *testing.T) {
	var paths []string
	cfg := fakeServer(t, crdServer(t, `{"spec":`, &paths))
	if _, err := Source[*widgetView](t.Context(), cfg, SourceOptions{Resource: widgets}); !errors.Is(err, ErrMalformed) {
		t.Errorf("malformed CRD: %v", err)
	}
	down := fakeServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "") })
	down.Host = "http://127.0.0.1:1"
	if _, err := Source[*widgetView](t.Context(), down, SourceOptions{Resource: widgets}); !errors.Is(err, listwatch.ErrUnavailable) {
		t.Errorf("unreachable server: %v", err)
	}
}

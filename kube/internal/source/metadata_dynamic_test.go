package source

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/listwatch"
)

func partial(ns, name, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, Labels: map[string]string{"app": name}},
	}
}

func TestMetadataListAndWatchProtobuf(t *testing.T) {
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/apps/v1/namespaces/prod/deployments" {
			t.Errorf("path %q", r.URL.Path)
		}
		if r.URL.Query().Get("watch") == "true" {
			if r.Header.Get("Accept") != acceptMetadataWatch {
				t.Errorf("watch Accept %q", r.Header.Get("Accept"))
			}
			body := append(protoFrame(t, "ADDED", partial("prod", "web", "8")),
				protoFrame(t, "BOOKMARK", &metav1.PartialObjectMetadata{
					TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
					ObjectMeta: metav1.ObjectMeta{
						ResourceVersion: "9", Annotations: map[string]string{initialEventsEnd: "true"}}})...)
			writeBody(w, mediaProtoWatch, body)
			return
		}
		if r.Header.Get("Accept") != acceptMetadataList {
			t.Errorf("list Accept %q", r.Header.Get("Accept"))
		}
		list := &metav1.PartialObjectMetadataList{
			TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"},
			ListMeta: metav1.ListMeta{ResourceVersion: "7"},
			Items:    []metav1.PartialObjectMetadata{*partial("prod", "web", "6"), *partial("prod", "db", "7")},
		}
		writeBody(w, mediaProto, protoBytes(t, list))
	})
	lw, err := Metadata[*metav1.PartialObjectMetadata](cfg, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Options{Namespace: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := lw.List(context.Background(), listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 2 || page.Items[1].Name != "db" || page.Items[1].Labels["app"] != "db" || page.ResourceVersion != "7" {
		t.Fatalf("page %+v", page)
	}
	w, err := lw.Watch(context.Background(), listwatch.Options{SendInitialEvents: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if ev, err := w.Next(); err != nil || ev.Type != listwatch.Added || ev.Object.Name != "web" {
		t.Fatalf("event %+v, %v", ev, err)
	}
	if ev, err := w.Next(); err != nil || ev.Type != listwatch.Bookmark || !ev.InitialEventsEnd || ev.ResourceVersion != "9" {
		t.Fatalf("bookmark %+v, %v", ev, err)
	}
	if _, err := w.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

// A server that ignores the PartialObjectMetadata conversion answers full
// objects in JSON; the metadata source keeps their metadata.
func TestMetadataAcceptsFullJSONObjects(t *testing.T) {
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			writeBody(w, mediaJSON, jsonFrame(t, "MODIFIED", pod("ns", "p", "4")))
			return
		}
		writeBody(w, mediaJSON, jsonBytes(t, &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "3"},
			Items: []corev1.Pod{*pod("ns", "p", "3")}}))
	})
	lw, err := Metadata[*metav1.PartialObjectMetadata](cfg, podsGVR, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page, err := lw.List(context.Background(), listwatch.Options{})
	if err != nil || len(page.Items) != 1 || page.Items[0].Name != "p" || page.Items[0].Kind != "PartialObjectMetadata" {
		t.Fatalf("page %+v, %v", page, err)
	}
	w, err := lw.Watch(context.Background(), listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if ev, err := w.Next(); err != nil || ev.Object.Name != "p" || ev.ResourceVersion != "4" {
		t.Fatalf("event %+v, %v", ev, err)
	}
}

var widgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

func widget(name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetName(name)
	u.SetNamespace("ns")
	u.SetResourceVersion(rv)
	_ = unstructured.SetNestedField(u.Object, int64(3), "spec", "size")
	return u
}

func TestDynamicListAndWatch(t *testing.T) {
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/example.com/v1/namespaces/ns/widgets" || r.Header.Get("Accept") != acceptJSON {
			t.Errorf("request %s Accept %q", r.URL.Path, r.Header.Get("Accept"))
		}
		if r.URL.Query().Get("watch") == "true" {
			other := widget("x", "5")
			other.SetAPIVersion("example.com/v2")
			body := append(jsonFrame(t, "ADDED", widget("a", "4")), jsonFrame(t, "ADDED", other)...)
			body = append(body, jsonFrame(t, "ERROR", &metav1.Status{Code: 500, Reason: metav1.StatusReasonInternalError, Message: "boom"})...)
			writeBody(w, mediaJSON, body)
			return
		}
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "WidgetList",
			"metadata": map[string]any{"resourceVersion": "3", "continue": "c1"}}}
		list.Items = []unstructured.Unstructured{*widget("a", "2"), *widget("b", "3")}
		b, err := list.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		writeBody(w, mediaJSON, b)
	})
	lw, err := Dynamic[*unstructured.Unstructured](cfg, widgetsGVR, Options{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := lw.List(context.Background(), listwatch.Options{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 2 || page.Items[1].GetName() != "b" || page.ResourceVersion != "3" || page.Continue != "c1" {
		t.Fatalf("page %+v", page)
	}
	if size, _, _ := unstructured.NestedInt64(page.Items[0].Object, "spec", "size"); size != 3 {
		t.Fatalf("spec.size = %d", size)
	}
	w, err := lw.Watch(context.Background(), listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if ev, err := w.Next(); err != nil || ev.Object.GetName() != "a" {
		t.Fatalf("event %+v, %v", ev, err)
	}
	if _, err := w.Next(); !errors.Is(err, listwatch.ErrWrongType) {
		t.Fatalf("other version: %v, want ErrWrongType", err)
	}
	ev, err := w.Next()
	if err != nil || ev.Type != listwatch.Error || ev.Err == nil || !containsFold(ev.Err.Error(), "boom") {
		t.Fatalf("error event %+v, %v", ev, err)
	}
}

// Dynamic and Metadata are generic only so that a caller generic in T
// gets the source as it is: any other T than the one each serves is an
// error naming it, before any request.
func TestDynamicAndMetadataRefuseAnotherType(t *testing.T) {
	cfg := &rest.Config{Host: "http://127.0.0.1:1"}
	if _, err := Dynamic[*metav1.PartialObjectMetadata](cfg, widgetsGVR, Options{}); err == nil || !strings.Contains(err.Error(), "PartialObjectMetadata") {
		t.Errorf("Dynamic of *metav1.PartialObjectMetadata: %v", err)
	}
	if _, err := Metadata[*unstructured.Unstructured](cfg, podsGVR, Options{}); err == nil || !strings.Contains(err.Error(), "Unstructured") {
		t.Errorf("Metadata of *unstructured.Unstructured: %v", err)
	}
}

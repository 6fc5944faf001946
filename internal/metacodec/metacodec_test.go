package metacodec

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// An error answer becomes the same error through Serializer as through
// client-go's kubernetes/scheme, whatever its form: a Status in JSON or
// protobuf (failed or not), another object, or plain text.
func TestErrorsDecodeAsWithClientGosScheme(t *testing.T) {
	notFound := &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound,
		Message: `pods "web" not found`, Details: &metav1.StatusDetails{Name: "web", Kind: "pods"}}
	var proto bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(notFound, &proto); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, contentType, body string
		code                    int
		reason                  metav1.StatusReason
	}{
		{"json status", "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","code":409,"reason":"Conflict","message":"the object has been modified"}`, 409, metav1.StatusReasonConflict},
		{"protobuf status", "application/vnd.kubernetes.protobuf", proto.String(), 404, metav1.StatusReasonNotFound},
		{"status without version", "application/json", `{"kind":"Status","status":"Failure","code":410,"reason":"Expired","message":"too old resource version"}`, 410, metav1.StatusReasonExpired},
		{"successful status", "application/json", `{"kind":"Status","apiVersion":"v1","status":"Success","code":500}`, 500, metav1.StatusReasonInternalError},
		{"another object", "application/json", `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web"}}`, 500, metav1.StatusReasonInternalError},
		{"plain text", "text/plain", "etcdserver: request timed out", 504, metav1.StatusReasonTimeout},
		{"broken json", "application/json", `{"kind":"Status",`, 403, metav1.StatusReasonForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(tc.code)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			get := func(ns runtime.NegotiatedSerializer) error {
				cfg := &rest.Config{Host: srv.URL, APIPath: "/api", ContentConfig: rest.ContentConfig{
					GroupVersion: &schema.GroupVersion{Version: "v1"}, NegotiatedSerializer: ns}}
				c, err := rest.RESTClientFor(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Client.CloseIdleConnections()
				return c.Get().Resource("pods").Name("web").MaxRetries(0).Do(t.Context()).Error()
			}
			ours, theirs := get(Serializer), get(scheme.Codecs.WithoutConversion())
			if ours == nil || theirs == nil {
				t.Fatalf("errors %v and %v, want both set", ours, theirs)
			}
			if ours.Error() != theirs.Error() || !reflect.DeepEqual(ours, theirs) {
				t.Errorf("got %#v\nwant %#v (client-go's scheme)", ours, theirs)
			}
			if got := apierrors.ReasonForError(ours); got != tc.reason {
				t.Errorf("reason %q, want %q (%v)", got, tc.reason, ours)
			}
		})
	}
}

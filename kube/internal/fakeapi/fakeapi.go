// Package fakeapi is a fake kube-apiserver for the tests of package kube
// and its internal packages: an httptest server and the helpers that
// encode responses with apimachinery's real serializers, in the
// apiserver's wire formats.
package fakeapi

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// Media types of the apiserver's responses.
const (
	MediaProto      = "application/vnd.kubernetes.protobuf"
	MediaProtoWatch = "application/vnd.kubernetes.protobuf;stream=watch"
	MediaJSON       = "application/json"
)

// Server starts an httptest server running handler and returns a
// rest.Config for it. The server and its client connections are closed at
// the end of the test.
func Server(t testing.TB, handler http.HandlerFunc) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(handler)
	cfg := &rest.Config{Host: srv.URL}
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		CloseIdle(cfg)
	})
	return cfg
}

// CloseIdle drops the idle keep-alive connections of the transport client-go
// shares between configs equal to cfg, so no connection goroutine outlives
// the test.
func CloseIdle(cfg *rest.Config) {
	if c, err := rest.HTTPClientFor(cfg); err == nil {
		// The transport is wrapped (auth, user agent); close through the
		// wrappers.
		utilnet.CloseIdleConnectionsFor(c.Transport)
	}
}

// ProtoBytes encodes obj the way the apiserver does in a protobuf response:
// the k8s prefix, then a runtime.Unknown carrying obj's apiVersion and kind.
func ProtoBytes(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	setKind(t, obj)
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &buf); err != nil {
		t.Fatalf("encode %T: %v", obj, err)
	}
	return buf.Bytes()
}

// JSONBytes encodes obj as JSON with its apiVersion and kind.
func JSONBytes(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	setKind(t, obj)
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("encode %T: %v", obj, err)
	}
	return b
}

// setKind fills obj's TypeMeta from the scheme, unless already set.
func setKind(t testing.TB, obj runtime.Object) {
	t.Helper()
	if !obj.GetObjectKind().GroupVersionKind().Empty() {
		return
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatalf("kind of %T: %v", obj, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvks[0])
}

// ProtoFrame is one protobuf watch frame: a 4-byte big-endian length, then
// a metav1.WatchEvent whose object is ProtoBytes of obj.
func ProtoFrame(t testing.TB, typ string, obj runtime.Object) []byte {
	t.Helper()
	return ProtoFrameRaw(t, typ, ProtoBytes(t, obj))
}

// ProtoFrameRaw is ProtoFrame of an object already encoded (raw).
func ProtoFrameRaw(t testing.TB, typ string, raw []byte) []byte {
	t.Helper()
	ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: raw}}
	data, err := ev.Marshal()
	if err != nil {
		t.Fatalf("marshal event: %v", err)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	return append(out, data...)
}

// JSONFrame is one JSON watch event, newline-terminated as the apiserver
// writes them.
func JSONFrame(t testing.TB, typ string, obj runtime.Object) []byte {
	t.Helper()
	b, err := json.Marshal(metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: JSONBytes(t, obj)}})
	if err != nil {
		t.Fatalf("marshal event: %v", err)
	}
	return append(b, '\n')
}

// WriteBody answers 200 with the given content type and body.
func WriteBody(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// WriteStatus answers with a metav1.Status as JSON, as the apiserver does.
func WriteStatus(t testing.TB, w http.ResponseWriter, st *metav1.Status) {
	t.Helper()
	st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	w.Header().Set("Content-Type", MediaJSON)
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(st)
}

// Pod builds a pod with a name, namespace and resource version.
func Pod(ns, name, rv string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv},
		Spec:       corev1.PodSpec{NodeName: "node-" + name},
	}
}

// PodsGVR is the resource of pods.
var PodsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// ClosedPort returns a rest.Config for a loopback port nothing listens on
// (it was free a moment ago), for requests that must be refused.
func ClosedPort(t testing.TB) *rest.Config {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return &rest.Config{Host: "http://" + addr}
}

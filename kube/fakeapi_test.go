package kube

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
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

// This file is a fake kube-apiserver for tests: it encodes responses with
// apimachinery's real serializers, in the apiserver's wire formats.

const (
	mediaProto      = "application/vnd.kubernetes.protobuf"
	mediaProtoWatch = "application/vnd.kubernetes.protobuf;stream=watch"
	mediaJSON       = "application/json"
)

// fakeServer starts an httptest server running handler and returns a
// rest.Config for it. The server and its client connections are closed at
// the end of the test.
func fakeServer(t testing.TB, handler http.HandlerFunc) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(handler)
	cfg := &rest.Config{Host: srv.URL}
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		closeIdle(cfg)
	})
	return cfg
}

// closeIdle drops the idle keep-alive connections of the transport client-go
// shares between configs equal to cfg, so no connection goroutine outlives
// the test.
func closeIdle(cfg *rest.Config) {
	if c, err := rest.HTTPClientFor(cfg); err == nil {
		// The transport is wrapped (auth, user agent); close through the
		// wrappers.
		utilnet.CloseIdleConnectionsFor(c.Transport)
	}
}

// protoBytes encodes obj the way the apiserver does in a protobuf response:
// the k8s prefix, then a runtime.Unknown carrying obj's apiVersion and kind.
func protoBytes(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	setKind(t, obj)
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &buf); err != nil {
		t.Fatalf("encode %T: %v", obj, err)
	}
	return buf.Bytes()
}

// jsonBytes encodes obj as JSON with its apiVersion and kind.
func jsonBytes(t testing.TB, obj runtime.Object) []byte {
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

// protoFrame is one protobuf watch frame: a 4-byte big-endian length, then
// a metav1.WatchEvent whose object is protoBytes of obj.
func protoFrame(t testing.TB, typ string, obj runtime.Object) []byte {
	t.Helper()
	return protoFrameRaw(t, typ, protoBytes(t, obj))
}

func protoFrameRaw(t testing.TB, typ string, raw []byte) []byte {
	t.Helper()
	ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: raw}}
	data, err := ev.Marshal()
	if err != nil {
		t.Fatalf("marshal event: %v", err)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	return append(out, data...)
}

// jsonFrame is one JSON watch event, newline-terminated as the apiserver
// writes them.
func jsonFrame(t testing.TB, typ string, obj runtime.Object) []byte {
	t.Helper()
	b, err := json.Marshal(metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: jsonBytes(t, obj)}})
	if err != nil {
		t.Fatalf("marshal event: %v", err)
	}
	return append(b, '\n')
}

// writeBody answers 200 with the given content type and body.
func writeBody(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// writeStatus answers with a metav1.Status as JSON, as the apiserver does.
func writeStatus(t testing.TB, w http.ResponseWriter, st *metav1.Status) {
	t.Helper()
	st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	w.Header().Set("Content-Type", mediaJSON)
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(st)
}

// pod builds a pod with a name, namespace and resource version.
func pod(ns, name, rv string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv},
		Spec:       corev1.PodSpec{NodeName: "node-" + name},
	}
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

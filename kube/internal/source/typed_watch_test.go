package source

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kinformer/kinformer/listwatch"
)

// bookmark is the object of a bookmark event: only a version and, for the
// end of a streaming list, the initial-events-end annotation.
func bookmark(rv string, end bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	if end {
		p.Annotations = map[string]string{initialEventsEnd: "true"}
	}
	return p
}

type wireEvent struct {
	typ string
	obj runtime.Object
}

// watchServer serves one watch stream of events, in protobuf or JSON, then
// ends the response (as the apiserver does when timeoutSeconds passes).
func watchServer(t *testing.T, proto bool, query *url.Values, events ...wireEvent) *listwatch.ListerWatcher[*corev1.Pod] {
	t.Helper()
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if query != nil {
			*query = r.URL.Query()
		}
		var body []byte
		ct := mediaJSON
		for _, ev := range events {
			if proto {
				body = append(body, protoFrame(t, ev.typ, ev.obj)...)
				ct = mediaProtoWatch
			} else {
				body = append(body, jsonFrame(t, ev.typ, ev.obj)...)
			}
		}
		writeBody(w, ct, body)
	})
	var lw listwatch.ListerWatcher[*corev1.Pod]
	lw, err := Typed[*corev1.Pod](cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &lw
}

func TestTypedWatchDecodesEveryEventType(t *testing.T) {
	for _, proto := range []bool{true, false} {
		name := "json"
		if proto {
			name = "protobuf"
		}
		t.Run(name, func(t *testing.T) {
			var q url.Values
			lw := watchServer(t, proto, &q,
				wireEvent{"ADDED", pod("ns", "a", "11")},
				wireEvent{"MODIFIED", pod("ns", "a", "12")},
				wireEvent{"BOOKMARK", bookmark("13", false)},
				wireEvent{"DELETED", pod("ns", "a", "14")},
				wireEvent{"BOOKMARK", bookmark("15", true)},
				wireEvent{"ERROR", &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 3 (9)"}},
			)
			w, err := (*lw).Watch(context.Background(), listwatch.Options{
				ResourceVersion: "10", AllowBookmarks: true, TimeoutSeconds: 300, FieldSelector: "spec.nodeName=n1",
			})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			want := []struct {
				typ listwatch.EventType
				rv  string
				end bool
			}{
				{listwatch.Added, "11", false},
				{listwatch.Modified, "12", false},
				{listwatch.Bookmark, "13", false},
				{listwatch.Deleted, "14", false},
				{listwatch.Bookmark, "15", true},
			}
			for i, wnt := range want {
				ev, err := w.Next()
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if ev.Type != wnt.typ || ev.ResourceVersion != wnt.rv || ev.InitialEventsEnd != wnt.end ||
					ev.Object.GetResourceVersion() != wnt.rv {
					t.Fatalf("event %d = %+v, want %+v", i, ev, wnt)
				}
				if ev.Type != listwatch.Bookmark && (ev.Object.Name != "a" || ev.Object.Spec.NodeName != "node-a") {
					t.Fatalf("event %d object: %+v", i, ev.Object)
				}
			}
			ev, err := w.Next()
			if err != nil || ev.Type != listwatch.Error || !errors.Is(ev.Err, listwatch.ErrExpired) {
				t.Fatalf("error event = %+v, %v; want Error wrapping ErrExpired", ev, err)
			}
			var se *apierrors.StatusError
			if !errors.As(ev.Err, &se) || se.ErrStatus.Message != "too old resource version: 3 (9)" {
				t.Fatalf("error event lost the server's message: %v", ev.Err)
			}
			if _, err := w.Next(); err != io.EOF {
				t.Fatalf("after the last event: %v, want io.EOF", err)
			}
			if _, err := w.Next(); err != io.EOF {
				t.Fatalf("Next after the end: %v, want io.EOF again", err)
			}
			if q.Get("watch") != "true" || q.Get("resourceVersion") != "10" || q.Get("allowWatchBookmarks") != "true" ||
				q.Get("timeoutSeconds") != "300" || q.Get("fieldSelector") != "spec.nodeName=n1" || q.Has("sendInitialEvents") {
				t.Fatalf("query %v", q)
			}
		})
	}
}

func TestTypedWatchSkipsObjectOfWrongKind(t *testing.T) {
	for _, proto := range []bool{true, false} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", ResourceVersion: "2"}}
		lw := watchServer(t, proto, nil,
			wireEvent{"ADDED", cm},
			wireEvent{"ADDED", pod("ns", "a", "3")},
		)
		w, err := (*lw).Watch(context.Background(), listwatch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.Next()
		var de *listwatch.DecodeError
		if !errors.As(err, &de) || de.Type != listwatch.Added || !containsFold(de.Got, "ConfigMap") {
			t.Fatalf("proto=%v: err = %#v, want a DecodeError for an ADDED ConfigMap", proto, err)
		}
		ev, err := w.Next()
		if err != nil || ev.Object.Name != "a" {
			t.Fatalf("proto=%v: after a wrong-kind event: %+v, %v; want the next pod", proto, ev, err)
		}
		w.Close()
	}
}

// rawWatch serves body verbatim as a watch response.
func rawWatch(t *testing.T, contentType string, body []byte) listwatch.Watch[*corev1.Pod] {
	t.Helper()
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) { writeBody(w, contentType, body) })
	lw, err := Typed[*corev1.Pod](cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := lw.Watch(context.Background(), listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func TestTypedWatchBrokenStreamIsMalformed(t *testing.T) {
	good := protoFrame(t, "ADDED", pod("ns", "a", "1"))
	tests := []struct {
		name, contentType string
		body              []byte
	}{
		{"truncated frame", mediaProtoWatch, append(append([]byte{}, good...), good[:len(good)-3]...)},
		{"truncated length", mediaProtoWatch, append(append([]byte{}, good...), 0, 0)},
		{"huge length", mediaProtoWatch, append(append([]byte{}, good...), 0xff, 0xff, 0xff, 0xff)},
		{"garbage frame", mediaProtoWatch, append(append([]byte{}, good...), 0, 0, 0, 3, 0xff, 0xff, 0xff)},
		{"object without prefix", mediaProtoWatch, append(append([]byte{}, good...), protoFrameRaw(t, "ADDED", []byte("nope"))...)},
		{"corrupt object", mediaProtoWatch, append(append([]byte{}, good...), protoFrameRaw(t, "ADDED", corruptPod(t))...)},
		{"unknown event type", mediaProtoWatch, append(append([]byte{}, good...), protoFrame(t, "EXPLODED", pod("ns", "a", "2"))...)},
		{"status in non-error", mediaProtoWatch, append(append([]byte{}, good...), protoFrame(t, "ERROR", pod("ns", "a", "2"))...)},
		{"truncated json", mediaJSON, append(jsonFrame(t, "ADDED", pod("ns", "a", "1")), []byte(`{"type":"ADDED","object":{"kind":`)...)},
		{"invalid json", mediaJSON, append(jsonFrame(t, "ADDED", pod("ns", "a", "1")), []byte(`{"type":]`)...)},
		{"json object of wrong shape", mediaJSON, append(jsonFrame(t, "ADDED", pod("ns", "a", "1")), []byte(`{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","spec":7}}`)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := rawWatch(t, tt.contentType, tt.body)
			if ev, err := w.Next(); err != nil || ev.Object.Name != "a" {
				t.Fatalf("first event: %+v, %v", ev, err)
			}
			_, err := w.Next()
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			if _, again := w.Next(); !errors.Is(again, ErrMalformed) {
				t.Fatalf("Next after a broken stream: %v, want the same error", again)
			}
		})
	}
}

// corruptPod is a pod's protobuf envelope whose inner bytes do not decode.
func corruptPod(t *testing.T) []byte {
	b := protoBytes(t, pod("ns", "a", "2"))
	env, err := parseEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range env.Raw {
		env.Raw[i] = 0xff
	}
	return b
}

func TestTypedWatchCloseUnblocksNext(t *testing.T) {
	release := make(chan struct{}) // closed at the end of the test; unblocks the handler
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", mediaProtoWatch)
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	lw, err := Typed[*corev1.Pod](cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := lw.Watch(context.Background(), listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error) // Next's result
	go func() {
		_, err := w.Next()
		done <- err
	}()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != io.EOF {
		t.Fatalf("Next after Close: %v, want io.EOF", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestTypedWatchContextCancelEndsStream(t *testing.T) {
	release := make(chan struct{})
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", mediaJSON)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(jsonFrame(t, "ADDED", pod("ns", "a", "1")))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	lw, err := Typed[*corev1.Pod](cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := lw.Watch(ctx, listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if ev, err := w.Next(); err != nil || ev.Object.Name != "a" {
		t.Fatalf("first event: %+v, %v", ev, err)
	}
	cancel()
	if _, err := w.Next(); err != io.EOF {
		t.Fatalf("Next after cancel: %v, want io.EOF", err)
	}
}

func TestTypedWatchStreamingListRejected(t *testing.T) {
	for _, code := range []int32{http.StatusUnprocessableEntity, http.StatusBadRequest} {
		var q url.Values
		cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			q = r.URL.Query()
			writeStatus(t, w, &metav1.Status{Code: code, Reason: metav1.StatusReasonInvalid,
				Message: "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
				Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseType("FieldValueForbidden"), Field: "sendInitialEvents"}}}})
		})
		lw, err := Typed[*corev1.Pod](cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = lw.Watch(context.Background(), listwatch.Options{SendInitialEvents: true,
			ResourceVersionMatch: listwatch.MatchNotOlderThan, AllowBookmarks: true})
		if !errors.Is(err, listwatch.ErrStreamingListUnsupported) {
			t.Fatalf("code %d: err = %v, want ErrStreamingListUnsupported", code, err)
		}
		var se *apierrors.StatusError
		if !errors.As(err, &se) || se.ErrStatus.Code != code {
			t.Fatalf("code %d: status lost: %v", code, err)
		}
		if q.Get("sendInitialEvents") != "true" || q.Get("resourceVersionMatch") != "NotOlderThan" {
			t.Fatalf("query %v", q)
		}
	}
}

func TestTypedWatchStartErrorsAreMapped(t *testing.T) {
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeStatus(t, w, &metav1.Status{Code: 410, Reason: metav1.StatusReasonGone, Message: "gone away"})
	})
	lw, err := Typed[*corev1.Pod](cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = lw.Watch(context.Background(), listwatch.Options{ResourceVersion: "1"})
	var se *apierrors.StatusError
	if !errors.Is(err, listwatch.ErrExpired) || !errors.As(err, &se) || se.ErrStatus.Message != "gone away" {
		t.Fatalf("err = %v", err)
	}
}

func TestTypedWatchNonStatusErrorKeepsHTTPStatus(t *testing.T) {
	cfg := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("apiserver is shutting down"))
	})
	lw, err := Typed[*corev1.Pod](cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = lw.Watch(context.Background(), listwatch.Options{})
	var se *apierrors.StatusError
	if !errors.Is(err, listwatch.ErrUnavailable) || !errors.As(err, &se) || se.ErrStatus.Code != 503 {
		t.Fatalf("err = %v", err)
	}
}

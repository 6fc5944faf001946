package source

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/internal/listquery"
	"github.com/kinformer/kinformer/listwatch"
)

func podCodec(t testing.TB) *codec[*corev1.Pod] {
	t.Helper()
	b, err := resolveBuiltin(reflect.TypeFor[*corev1.Pod]())
	if err != nil {
		t.Fatal(err)
	}
	c, err := structCodec[*corev1.Pod](b, acceptTyped, acceptTyped, false)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func validUTF8(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// decodeAll runs a watch decoder over stream until it ends, and returns the
// events and the final error.
func decodeAll(c *codec[*corev1.Pod], stream []byte, proto bool) ([]listwatch.Event[*corev1.Pod], error) {
	w := newStreamWatch(listquery.NewBody(context.Background(), io.NopCloser(bytes.NewReader(stream)), nil), c, proto)
	defer w.Close()
	var evs []listwatch.Event[*corev1.Pod]
	for range 10000 {
		ev, err := w.Next()
		switch {
		case errors.Is(err, listwatch.ErrWrongType):
			continue
		case err != nil:
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// FuzzWatchDecoder feeds arbitrary bytes to the watch stream decoder, in
// both wire formats: it must never panic, and must end with io.EOF or an
// error wrapping ErrMalformed.
func FuzzWatchDecoder(f *testing.F) {
	f.Add(protoFrame(f, "ADDED", pod("ns", "a", "1")), true)
	f.Add(append(protoFrame(f, "BOOKMARK", bookmark("2", true)), protoFrame(f, "ERROR", &metav1.Status{Code: 410})...), true)
	f.Add(protoFrame(f, "ADDED", &corev1.ConfigMap{}), true)
	f.Add(jsonFrame(f, "MODIFIED", pod("ns", "a", "1")), false)
	f.Add(jsonFrame(f, "ERROR", &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired}), false)
	f.Add([]byte{0, 0, 0, 2, 0x0a, 0x00}, true)
	f.Add([]byte(`{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod"}}`), false)
	c := podCodec(f)
	f.Fuzz(func(t *testing.T, stream []byte, proto bool) {
		_, err := decodeAll(c, stream, proto)
		if err != nil && err != io.EOF && !errors.Is(err, ErrMalformed) {
			t.Fatalf("decoder ended with %v, want io.EOF or ErrMalformed", err)
		}
	})
}

// FuzzWatchRoundTrip encodes events with apimachinery's serializers and
// checks the decoder gives back what was encoded, in both wire formats.
func FuzzWatchRoundTrip(f *testing.F) {
	f.Add("default", "web-0", "12345", uint8(0), "node-1")
	f.Add("", "n", "", uint8(3), "")
	f.Add("kube-system", "ünïcödé", "9", uint8(2), "x\x00y")
	types := []string{"ADDED", "MODIFIED", "DELETED", "BOOKMARK"}
	c := podCodec(f)
	f.Fuzz(func(t *testing.T, ns, name, rv string, typ uint8, node string) {
		p := pod(ns, name, rv)
		p.Spec.NodeName = node
		p.Annotations = map[string]string{initialEventsEnd: "true"}
		et := types[int(typ)%len(types)]
		for _, proto := range []bool{true, false} {
			var frame []byte
			if proto {
				frame = protoFrame(t, et, p)
			} else {
				frame = jsonFrame(t, et, p)
			}
			evs, err := decodeAll(c, bytes.Repeat(frame, 2), proto)
			if err != io.EOF || len(evs) != 2 {
				if !proto && !validUTF8(ns, name, rv, node) {
					continue // JSON replaces invalid UTF-8, so no round trip
				}
				t.Fatalf("proto=%v: %d events, %v", proto, len(evs), err)
			}
			for _, ev := range evs {
				got := ev.Object
				if string(ev.Type) != et || ev.ResourceVersion != rv || got.Namespace != ns || got.Name != name ||
					got.Spec.NodeName != node || ev.InitialEventsEnd != (et == "BOOKMARK") {
					if !proto && !validUTF8(ns, name, rv, node) {
						continue
					}
					t.Fatalf("proto=%v: decoded %+v from %+v", proto, ev, p)
				}
				if got.GroupVersionKind() != (schema.GroupVersionKind{Version: "v1", Kind: "Pod"}) {
					t.Fatalf("kind %v", got.GroupVersionKind())
				}
			}
		}
	})
}

// FuzzListDecoder feeds arbitrary bytes to the list decoders: they must
// never panic, and must fail only with ErrMalformed or ErrWrongType.
func FuzzListDecoder(f *testing.F) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7", Continue: "c"},
		Items: []corev1.Pod{*pod("ns", "a", "1"), *pod("ns", "b", "2")}}
	f.Add(protoBytes(f, list), true)
	f.Add(protoBytes(f, &corev1.ConfigMapList{}), true)
	f.Add(jsonBytes(f, list), false)
	f.Add([]byte(`{"apiVersion":"v1","kind":"PodList","items":[{}]}`), false)
	c := podCodec(f)
	f.Fuzz(func(t *testing.T, body []byte, proto bool) {
		page, err := c.list(body, proto)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, listwatch.ErrWrongType) {
				t.Fatalf("list decoder failed with %v", err)
			}
			return
		}
		for _, p := range page.Items {
			if p == nil {
				t.Fatal("nil item")
			}
		}
	})
}

package source

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/listquery"
	"github.com/kinformer/kinformer/listwatch"
)

// maxFrame bounds one protobuf watch frame, so a corrupt length cannot make
// the decoder allocate gigabytes. The apiserver's own request limit is far
// below it.
const maxFrame = 128 << 20

// watchReadBuffer is the read buffer of a protobuf watch: a few pods'
// frames.
const watchReadBuffer = 64 << 10

// initialEventsEnd is the annotation on the bookmark that ends a streaming
// list.
const initialEventsEnd = "k8s.io/initial-events-end"

// streamWatch is a pull decoder over a watch response body: Next reads and
// decodes exactly one event in the caller's goroutine. There is no reader
// goroutine and no channel.
type streamWatch[T cache.Object] struct {
	body  *listquery.Body
	codec *codec[T]
	// proto selects length-delimited protobuf frames; otherwise the body
	// is a stream of JSON objects read through dec.
	proto bool
	dec   *json.Decoder
	// r buffers a protobuf body: frames that fit are decoded in place
	// (Peek), and the transport sees large reads (HTTP/2 sends a window
	// update per 4 KiB read at least, a write per frame otherwise).
	r   *bufio.Reader
	buf []byte // buffer of frames larger than r's, reused: decoded objects copy out of it

	// err is the terminal error Next returns from then on. Only Next
	// touches it (Next is not safe for concurrent use).
	err error
}

// newStreamWatch starts decoding body (which closes itself when the
// watch's context ends).
func newStreamWatch[T cache.Object](body *listquery.Body, c *codec[T], proto bool) *streamWatch[T] {
	w := &streamWatch[T]{body: body, codec: c, proto: proto}
	if proto {
		w.r = bufio.NewReaderSize(body, watchReadBuffer)
	} else {
		w.dec = json.NewDecoder(body)
	}
	return w
}

// Close ends the stream and unblocks a pending Next. Safe to call more than
// once and from any goroutine.
func (w *streamWatch[T]) Close() error { return w.body.Close() }

// Next returns the next event. A *listwatch.DecodeError (an object of
// another kind than the source serves) skips one event and leaves the
// stream usable; every other error, and io.EOF, is final.
func (w *streamWatch[T]) Next() (listwatch.Event[T], error) {
	if w.err != nil {
		return listwatch.Event[T]{}, w.err
	}
	var ev listwatch.Event[T]
	var err error
	if w.proto {
		ev, err = w.nextProto()
	} else {
		ev, err = w.nextJSON()
	}
	if err != nil && !errors.Is(err, listwatch.ErrWrongType) {
		w.err = err
	}
	return ev, err
}

// readFailed turns a failed read of the body into Next's error (see
// listquery.Body.ReadFailed).
func (w *streamWatch[T]) readFailed(err error, atBoundary bool) error {
	return w.body.ReadFailed(err, atBoundary, ErrMalformed)
}

func (w *streamWatch[T]) nextProto() (listwatch.Event[T], error) {
	var hdr [4]byte
	if n, err := io.ReadFull(w.r, hdr[:]); err != nil {
		return listwatch.Event[T]{}, w.readFailed(err, n == 0)
	}
	size := binary.BigEndian.Uint32(hdr[:])
	if size > maxFrame {
		return listwatch.Event[T]{}, fmt.Errorf("%w: watch frame of %d bytes exceeds %d", ErrMalformed, size, maxFrame)
	}
	if int(size) <= w.r.Size() {
		frame, err := w.r.Peek(int(size))
		if err != nil {
			return listwatch.Event[T]{}, w.readFailed(err, false)
		}
		ev, err := decodeProtoEvent(w.codec, frame)
		_, _ = w.r.Discard(len(frame)) // cannot fail: the bytes are buffered
		ev.Bytes = int64(len(hdr)) + int64(size)
		return ev, err
	}
	if cap(w.buf) < int(size) {
		w.buf = make([]byte, size)
	}
	frame := w.buf[:size]
	if _, err := io.ReadFull(w.r, frame); err != nil {
		return listwatch.Event[T]{}, w.readFailed(err, false)
	}
	ev, err := decodeProtoEvent(w.codec, frame)
	ev.Bytes = int64(len(hdr)) + int64(size)
	return ev, err
}

// decodeProtoEvent decodes one protobuf watch frame (a metav1.WatchEvent).
func decodeProtoEvent[T cache.Object](c *codec[T], frame []byte) (listwatch.Event[T], error) {
	var ev listwatch.Event[T]
	typ, raw, err := parseWatchEvent(frame)
	if err != nil {
		return ev, err
	}
	ev.Type, err = eventType(string(typ))
	if err != nil {
		return ev, err
	}
	env, err := parseEnvelope(raw)
	if err != nil {
		return ev, err
	}
	if ev.Type == listwatch.Error {
		if string(env.Kind) != "Status" {
			return ev, fmt.Errorf("%w: ERROR event carrying %s %s instead of a Status", ErrMalformed, env.APIVersion, env.Kind)
		}
		var st metav1.Status
		if err := st.Unmarshal(env.Raw); err != nil {
			return ev, fmt.Errorf("%w: Status: %w", ErrMalformed, err)
		}
		ev.Err = listquery.StatusError(&st)
		return ev, nil
	}
	if string(env.APIVersion) != c.apiVersion || (c.kind != "" && string(env.Kind) != c.kind) {
		return ev, &listwatch.DecodeError{Type: ev.Type, Got: string(env.APIVersion) + " " + string(env.Kind),
			Err: fmt.Errorf("want %s %s", c.apiVersion, c.kind)}
	}
	if c.protoObject == nil {
		return ev, fmt.Errorf("%w: protobuf object for a JSON-only source", ErrMalformed)
	}
	decode := c.protoObject
	if c.protoChanged != nil && ev.Type != listwatch.Added {
		decode = c.protoChanged
	}
	obj, err := decode(env.Raw)
	if err != nil {
		return ev, err
	}
	ev = finishEvent(ev, obj)
	if ev.Type == listwatch.Bookmark && c.bookmarkEnd != nil {
		ev.InitialEventsEnd = c.bookmarkEnd(env.Raw, true)
	}
	return ev, nil
}

// jsonEvent is a metav1.WatchEvent as JSON, the object left undecoded.
type jsonEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

func (w *streamWatch[T]) nextJSON() (listwatch.Event[T], error) {
	var je jsonEvent
	start := w.dec.InputOffset()
	if err := w.dec.Decode(&je); err != nil {
		var syntax *json.SyntaxError
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &syntax) || errors.As(err, &typeErr) {
			return listwatch.Event[T]{}, fmt.Errorf("%w: watch event: %w", ErrMalformed, err)
		}
		return listwatch.Event[T]{}, w.readFailed(err, errors.Is(err, io.EOF))
	}
	ev, err := decodeJSONEvent(w.codec, &je)
	ev.Bytes = w.dec.InputOffset() - start
	return ev, err
}

// decodeJSONEvent decodes one JSON watch event.
func decodeJSONEvent[T cache.Object](c *codec[T], je *jsonEvent) (listwatch.Event[T], error) {
	var ev listwatch.Event[T]
	var err error
	ev.Type, err = eventType(je.Type)
	if err != nil {
		return ev, err
	}
	if ev.Type == listwatch.Error {
		var st metav1.Status
		if err := json.Unmarshal(je.Object, &st); err != nil || st.Kind != "Status" {
			return ev, fmt.Errorf("%w: ERROR event without a Status: %s", ErrMalformed, listquery.Truncate(je.Object))
		}
		ev.Err = listquery.StatusError(&st)
		return ev, nil
	}
	obj, err := c.jsonObject(je.Object)
	var de *listwatch.DecodeError
	if errors.As(err, &de) && de.Type == "" {
		de.Type = ev.Type
	}
	if err != nil {
		return ev, err
	}
	ev = finishEvent(ev, obj)
	if ev.Type == listwatch.Bookmark && c.bookmarkEnd != nil {
		ev.InitialEventsEnd = c.bookmarkEnd(je.Object, false)
	}
	return ev, nil
}

// finishEvent fills the fields derived from the object.
func finishEvent[T cache.Object](ev listwatch.Event[T], obj T) listwatch.Event[T] {
	ev.Object = obj
	ev.ResourceVersion = obj.GetResourceVersion()
	if ev.Type == listwatch.Bookmark {
		if a, ok := any(obj).(interface{ GetAnnotations() map[string]string }); ok {
			ev.InitialEventsEnd = a.GetAnnotations()[initialEventsEnd] == "true"
		}
	}
	return ev
}

// eventType maps the wire's event type onto the listwatch constant (so an
// event's type costs no allocation).
func eventType(s string) (listwatch.EventType, error) {
	switch s {
	case string(listwatch.Added):
		return listwatch.Added, nil
	case string(listwatch.Modified):
		return listwatch.Modified, nil
	case string(listwatch.Deleted):
		return listwatch.Deleted, nil
	case string(listwatch.Bookmark):
		return listwatch.Bookmark, nil
	case string(listwatch.Error):
		return listwatch.Error, nil
	}
	return "", fmt.Errorf("%w: unknown watch event type %q", ErrMalformed, listquery.Truncate([]byte(s)))
}

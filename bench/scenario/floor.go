package scenario

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// The floor of an initial sync (issue 13, part 3): the time to receive the
// bytes of the list kinformer makes by default, and throw them away. The
// reflector's default (StreamingAuto) is a streaming list: a watch of every
// object with sendInitialEvents=true, resourceVersionMatch=NotOlderThan and
// bookmarks, no resource version (a consistent read), in protobuf (the
// typed source's Accept header), read until the bookmark annotated
// k8s.io/initial-events-end. readFloor makes that request over the same
// HTTP client a kube source builds from the config (rest.HTTPClientFor),
// reads length-prefixed frames through a 64 KiB buffer as kinformer's
// watch decoder does, looks only at each event's type, and decodes only
// bookmarks, to find the end.

// floorAccept is the Accept header of kinformer's typed sources.
const floorAccept = "application/vnd.kubernetes.protobuf, application/json"

// initialEventsEndAnnotation marks the bookmark that ends a streaming list.
const initialEventsEndAnnotation = "k8s.io/initial-events-end"

// readFloor streams every object of the collection at path ("api", "v1",
// "pods") from the server of cfg and discards them; it returns how many
// objects and bytes it read. It adds each object to counted as it reads
// it (for progress lines).
func readFloor(ctx context.Context, cfg *rest.Config, path []string, counted *atomic.Int64) (objects int, read int64, err error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, 0, err
	}
	defer hc.CloseIdleConnections()
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return 0, 0, err
	}
	u = u.JoinPath(path...)
	u.RawQuery = url.Values{
		"watch":                {"true"},
		"allowWatchBookmarks":  {"true"},
		"sendInitialEvents":    {"true"},
		"resourceVersionMatch": {"NotOlderThan"},
		"timeoutSeconds":       {"600"},
	}.Encode()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Accept", floorAccept)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 0, 0, fmt.Errorf("floor: %s: %s", resp.Status, b)
	}
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var buf []byte
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return objects, read, fmt.Errorf("floor: stream ended before the initial-events-end bookmark: %w", err)
		}
		size := int(binary.BigEndian.Uint32(hdr[:]))
		read += int64(len(hdr) + size)
		var frame []byte
		if size <= r.Size() {
			if frame, err = r.Peek(size); err != nil {
				return objects, read, err
			}
		} else {
			if cap(buf) < size {
				buf = make([]byte, size)
			}
			frame = buf[:size]
			if _, err := io.ReadFull(r, frame); err != nil {
				return objects, read, err
			}
		}
		typ, obj, err := watchEventFields(frame)
		if err != nil {
			return objects, read, err
		}
		switch string(typ) {
		case "ADDED", "MODIFIED", "DELETED":
			objects++
			counted.Add(1)
		case "BOOKMARK":
			end, err := initialEventsEnd(obj)
			if err != nil {
				return objects, read, err
			}
			if end {
				return objects, read, nil
			}
		case "ERROR":
			return objects, read, fmt.Errorf("floor: error event")
		}
		if size <= r.Size() {
			_, _ = r.Discard(size) // cannot fail: the bytes are buffered
		}
	}
}

// errFrame reports a watch frame that is not a protobuf WatchEvent.
var errFrame = errors.New("floor: malformed watch frame")

// protoFields calls fn with the number and bytes of every length-delimited
// field of a protobuf message, skipping varint and fixed-size ones.
func protoFields(msg []byte, fn func(num uint64, b []byte)) error {
	for len(msg) > 0 {
		tag, n := binary.Uvarint(msg)
		if n <= 0 {
			return errFrame
		}
		msg = msg[n:]
		switch tag & 7 {
		case 0: // varint
			if _, n = binary.Uvarint(msg); n <= 0 {
				return errFrame
			}
			msg = msg[n:]
		case 1: // 64-bit
			if len(msg) < 8 {
				return errFrame
			}
			msg = msg[8:]
		case 5: // 32-bit
			if len(msg) < 4 {
				return errFrame
			}
			msg = msg[4:]
		case 2:
			l, n := binary.Uvarint(msg)
			if n <= 0 || uint64(len(msg)-n) < l {
				return errFrame
			}
			fn(tag>>3, msg[n:n+int(l)])
			msg = msg[n+int(l):]
		default:
			return errFrame
		}
	}
	return nil
}

// protoField returns the bytes of msg's length-delimited field num (the
// last, if repeated; nil if absent).
func protoField(msg []byte, num uint64) (field []byte, err error) {
	err = protoFields(msg, func(n uint64, b []byte) {
		if n == num {
			field = b
		}
	})
	return field, err
}

// watchEventFields returns a metav1.WatchEvent's type (field 1) and the
// raw bytes of its object (field 2, a RawExtension whose field 1 holds
// them), without copying.
func watchEventFields(frame []byte) (typ, obj []byte, err error) {
	var ext []byte
	err = protoFields(frame, func(num uint64, b []byte) {
		switch num {
		case 1:
			typ = b
		case 2:
			ext = b
		}
	})
	if err == nil {
		obj, err = protoField(ext, 1)
	}
	return typ, obj, err
}

// initialEventsEnd decodes a bookmark's object (the "k8s\x00" prefix and
// a runtime.Unknown around the object, whose field 1 is its ObjectMeta in
// every kind) and reports whether it ends the initial events.
func initialEventsEnd(obj []byte) (bool, error) {
	raw, ok := bytes.CutPrefix(obj, []byte("k8s\x00"))
	if !ok {
		return false, errFrame
	}
	inner, err := protoField(raw, 2)
	if err != nil {
		return false, err
	}
	meta, err := protoField(inner, 1)
	if err != nil {
		return false, err
	}
	var m metav1.ObjectMeta
	if err := m.Unmarshal(meta); err != nil {
		return false, fmt.Errorf("floor: bookmark: %w", err)
	}
	return m.Annotations[initialEventsEndAnnotation] == "true", nil
}

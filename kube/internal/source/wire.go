package source

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// This file reads the few protobuf envelopes the apiserver wraps objects in,
// without copying: every []byte it returns aliases its input. Decoding the
// objects themselves is left to their generated Unmarshal methods, which copy
// what they keep, so the input buffer may be reused afterwards.

// protoMagic starts every protobuf-encoded object the apiserver sends
// (followed by a runtime.Unknown envelope).
var protoMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// protobuf wire types this file handles.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// protoFields walks the top-level fields of one protobuf message.
type protoFields struct {
	b []byte
}

// next returns the next field's number, wire type and, for length-delimited
// fields, its bytes. ok is false at the end of the message.
func (p *protoFields) next() (num uint64, typ int, val []byte, ok bool, err error) {
	if len(p.b) == 0 {
		return 0, 0, nil, false, nil
	}
	key, n := binary.Uvarint(p.b)
	if n <= 0 {
		return 0, 0, nil, false, fmt.Errorf("%w: bad protobuf field key", ErrMalformed)
	}
	p.b = p.b[n:]
	num, typ = key>>3, int(key&7)
	switch typ {
	case wireVarint:
		_, n = binary.Uvarint(p.b)
		if n <= 0 {
			return 0, 0, nil, false, fmt.Errorf("%w: bad protobuf varint", ErrMalformed)
		}
		p.b = p.b[n:]
	case wireFixed64, wireFixed32:
		size := 8
		if typ == wireFixed32 {
			size = 4
		}
		if len(p.b) < size {
			return 0, 0, nil, false, fmt.Errorf("%w: truncated protobuf field", ErrMalformed)
		}
		p.b = p.b[size:]
	case wireBytes:
		size, n := binary.Uvarint(p.b)
		if n <= 0 || size > uint64(len(p.b)-n) {
			return 0, 0, nil, false, fmt.Errorf("%w: truncated protobuf field", ErrMalformed)
		}
		val = p.b[n : n+int(size)]
		p.b = p.b[n+int(size):]
	default:
		return 0, 0, nil, false, fmt.Errorf("%w: unsupported protobuf wire type %d", ErrMalformed, typ)
	}
	return num, typ, val, true, nil
}

// envelope is a decoded runtime.Unknown: the object's type and its bytes.
type envelope struct {
	apiVersion, kind []byte
	raw              []byte
}

// parseEnvelope reads the magic prefix and the runtime.Unknown that wraps a
// protobuf object (a list body, or the object of a watch event).
func parseEnvelope(data []byte) (envelope, error) {
	var env envelope
	if !bytes.HasPrefix(data, protoMagic) {
		return env, fmt.Errorf("%w: protobuf object without the k8s prefix", ErrMalformed)
	}
	f := protoFields{b: data[len(protoMagic):]}
	for {
		num, typ, val, ok, err := f.next()
		if err != nil || !ok {
			return env, err
		}
		if typ != wireBytes {
			continue
		}
		switch num {
		case 1: // typeMeta
			tm := protoFields{b: val}
			for {
				num, typ, v, ok, err := tm.next()
				if err != nil {
					return env, err
				}
				if !ok {
					break
				}
				if typ == wireBytes && num == 1 {
					env.apiVersion = v
				} else if typ == wireBytes && num == 2 {
					env.kind = v
				}
			}
		case 2:
			env.raw = val
		}
	}
}

// parseWatchEvent reads a metav1.WatchEvent (the payload of one watch frame):
// its type and the bytes of its embedded object.
func parseWatchEvent(frame []byte) (typ, object []byte, err error) {
	f := protoFields{b: frame}
	for {
		num, wt, val, ok, err := f.next()
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return typ, object, nil
		}
		if wt != wireBytes {
			continue
		}
		switch num {
		case 1:
			typ = val
		case 2: // RawExtension
			raw := protoFields{b: val}
			for {
				n, t, v, ok, err := raw.next()
				if err != nil {
					return nil, nil, err
				}
				if !ok {
					break
				}
				if n == 1 && t == wireBytes {
					object = v
				}
			}
		}
	}
}

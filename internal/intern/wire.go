package intern

import (
	"encoding/binary"
	"errors"
)

// wireBytes is the protobuf wire type of length-delimited fields.
const wireBytes = 2

// errWire reports bytes that are not a protobuf message. Pod falls back to
// the plain decode on it, so its text never reaches a caller.
var errWire = errors.New("intern: malformed protobuf")

// wireFields walks the top-level fields of one protobuf message.
type wireFields struct {
	b []byte
}

// next returns the next field's number, wire type and, for length-delimited
// fields, its bytes. ok is false at the end of the message.
func (p *wireFields) next() (num uint64, typ int, val []byte, ok bool, err error) {
	if len(p.b) == 0 {
		return 0, 0, nil, false, nil
	}
	key, n := binary.Uvarint(p.b)
	if n <= 0 {
		return 0, 0, nil, false, errWire
	}
	p.b = p.b[n:]
	num, typ = key>>3, int(key&7)
	switch typ {
	case 0: // varint
		if _, n = binary.Uvarint(p.b); n <= 0 {
			return 0, 0, nil, false, errWire
		}
		p.b = p.b[n:]
	case 1, 5: // fixed64, fixed32
		size := 8
		if typ == 5 {
			size = 4
		}
		if len(p.b) < size {
			return 0, 0, nil, false, errWire
		}
		p.b = p.b[size:]
	case wireBytes:
		size, n := binary.Uvarint(p.b)
		if n <= 0 || size > uint64(len(p.b)-n) {
			return 0, 0, nil, false, errWire
		}
		val = p.b[n : n+int(size)]
		p.b = p.b[n+int(size):]
	default:
		return 0, 0, nil, false, errWire
	}
	return num, typ, val, true, nil
}

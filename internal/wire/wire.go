package wire

import (
	"encoding/binary"
	"errors"
	"reflect"
	"strconv"
	"strings"
)

// Protobuf wire types.
const (
	Varint     = 0
	Fixed64    = 1
	Bytes      = 2
	StartGroup = 3
	EndGroup   = 4
	Fixed32    = 5
)

// The errors of a malformed message. Callers wrap them in their own
// (kube's ErrMalformed, project's); they allocate nothing.
var (
	ErrKey       = errors.New("bad protobuf field key")
	ErrFieldZero = errors.New("protobuf field number 0")
	ErrVarint    = errors.New("bad protobuf varint")
	ErrTruncated = errors.New("truncated protobuf field")
	ErrGroup     = errors.New("truncated protobuf group")
	ErrWireType  = errors.New("unsupported protobuf wire type")
)

// Field is one field of a protobuf message.
type Field struct {
	Num  uint64
	Type int
	// V is the value of a varint or fixed-size field.
	V uint64
	// Bytes is the value of a length-delimited field; it aliases the
	// message.
	Bytes []byte
}

// Uvarint reads a varint, with a fast path for one byte. n <= 0 means b
// does not start with one (see binary.Uvarint).
func Uvarint(b []byte) (v uint64, n int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// Next reads the field at the start of b (which must not be empty) and
// returns it and the rest of b. A group (deprecated; no Kubernetes type
// has one) is skipped whole, nested groups included, as the generated
// Unmarshal methods skip it, and returned without a value.
func Next(b []byte) (Field, []byte, error) {
	var f Field
	key, n := Uvarint(b)
	if n <= 0 {
		return f, nil, ErrKey
	}
	b = b[n:]
	f.Num, f.Type = key>>3, int(key&7)
	if f.Num == 0 {
		return f, nil, ErrFieldZero
	}
	switch f.Type {
	case Varint:
		f.V, n = Uvarint(b)
		if n <= 0 {
			return f, nil, ErrVarint
		}
		return f, b[n:], nil
	case Fixed64:
		if len(b) < 8 {
			return f, nil, ErrTruncated
		}
		f.V = binary.LittleEndian.Uint64(b)
		return f, b[8:], nil
	case Fixed32:
		if len(b) < 4 {
			return f, nil, ErrTruncated
		}
		f.V = uint64(binary.LittleEndian.Uint32(b))
		return f, b[4:], nil
	case Bytes:
		size, n := Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) {
			return f, nil, ErrTruncated
		}
		f.Bytes = b[n : n+int(size)]
		return f, b[n+int(size):], nil
	case StartGroup:
		for {
			if len(b) == 0 {
				return f, nil, ErrGroup
			}
			// Like the generated code, any end-group key ends the group
			// (its number is not checked).
			if key, n := Uvarint(b); n > 0 && int(key&7) == EndGroup {
				return f, b[n:], nil
			}
			var err error
			if _, b, err = Next(b); err != nil {
				return f, nil, err
			}
		}
	}
	return f, nil, ErrWireType
}

// Fields walks the fields of one message, in the order they were written:
//
//	m := wire.Fields{B: raw}
//	for {
//		f, ok, err := m.Next()
//		if err != nil || !ok { ... }
//	}
type Fields struct {
	// B is what is left of the message.
	B []byte
}

// Next returns the next field; ok is false at the end of the message or on
// an error, after which Next returns the end.
func (m *Fields) Next() (f Field, ok bool, err error) {
	if len(m.B) == 0 {
		return f, false, nil
	}
	f, m.B, err = Next(m.B)
	if err != nil {
		m.B = nil
		return f, false, err
	}
	return f, true, nil
}

// Count returns how many fields numbered num b holds, as far as it can be
// read (a malformed tail is left for the decode that follows to report).
func Count(b []byte, num uint64) int {
	n := 0
	for len(b) > 0 {
		f, rest, err := Next(b)
		if err != nil {
			return n
		}
		if f.Num == num {
			n++
		}
		b = rest
	}
	return n
}

// Number returns the field number in a generated struct field's protobuf
// tag (`protobuf:"bytes,3,opt,name=spec"` gives 3), or 0 when it has none.
func Number(f reflect.StructField) uint64 {
	parts := strings.Split(f.Tag.Get("protobuf"), ",")
	if len(parts) < 2 {
		return 0
	}
	n, err := strconv.ParseUint(parts[1], 10, 29)
	if err != nil {
		return 0
	}
	return n
}

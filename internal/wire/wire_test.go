package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// appendField encodes f as a protobuf writer would.
func appendField(b []byte, f Field) []byte {
	b = binary.AppendUvarint(b, f.Num<<3|uint64(f.Type))
	switch f.Type {
	case Varint:
		b = binary.AppendUvarint(b, f.V)
	case Fixed64:
		b = binary.LittleEndian.AppendUint64(b, f.V)
	case Fixed32:
		b = binary.LittleEndian.AppendUint32(b, uint32(f.V))
	case Bytes:
		b = binary.AppendUvarint(b, uint64(len(f.Bytes)))
		b = append(b, f.Bytes...)
	}
	return b
}

func TestNextReadsEveryWireType(t *testing.T) {
	fields := []Field{
		{Num: 1, Type: Varint, V: 150},
		{Num: 2, Type: Bytes, Bytes: []byte("testing")},
		{Num: 3, Type: Fixed64, V: 1 << 60},
		{Num: 4, Type: Fixed32, V: 1 << 31},
		{Num: 1<<29 - 1, Type: Varint, V: 1<<64 - 1},
		{Num: 16, Type: Bytes, Bytes: []byte{}},
	}
	var msg []byte
	for _, f := range fields {
		msg = appendField(msg, f)
	}
	m := Fields{B: msg}
	for i, want := range fields {
		got, ok, err := m.Next()
		if err != nil || !ok {
			t.Fatalf("field %d: ok %v, %v", i, ok, err)
		}
		if got.Num != want.Num || got.Type != want.Type || got.V != want.V || !bytes.Equal(got.Bytes, want.Bytes) {
			t.Errorf("field %d: got %+v, want %+v", i, got, want)
		}
	}
	if f, ok, err := m.Next(); ok || err != nil {
		t.Errorf("after the last field: %+v, ok %v, %v; want the end", f, ok, err)
	}
}

func TestNextSkipsGroups(t *testing.T) {
	// field 5 as a group holding a varint and a nested group, then field 6.
	msg := []byte{5<<3 | StartGroup, 1<<3 | Varint, 7, 2<<3 | StartGroup, 3<<3 | EndGroup, 5<<3 | EndGroup}
	msg = appendField(msg, Field{Num: 6, Type: Bytes, Bytes: []byte("x")})
	f, rest, err := Next(msg)
	if err != nil || f.Num != 5 || f.Type != StartGroup {
		t.Fatalf("group: %+v, %v", f, err)
	}
	f, rest, err = Next(rest)
	if err != nil || f.Num != 6 || string(f.Bytes) != "x" || len(rest) != 0 {
		t.Fatalf("after the group: %+v, rest %x, %v", f, rest, err)
	}
}

func TestNextRejectsMalformedMessages(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  []byte
		want error
	}{
		{"key runs off the end", []byte{0x80}, ErrKey},
		{"field number 0", []byte{0 << 3, 1}, ErrFieldZero},
		{"varint runs off the end", []byte{1 << 3, 0xff}, ErrVarint},
		{"fixed64 short", []byte{1<<3 | Fixed64, 1, 2, 3}, ErrTruncated},
		{"fixed32 short", []byte{1<<3 | Fixed32, 1}, ErrTruncated},
		{"length past the end", []byte{1<<3 | Bytes, 5, 'a'}, ErrTruncated},
		{"huge length", append([]byte{1<<3 | Bytes}, binary.AppendUvarint(nil, 1<<63)...), ErrTruncated},
		{"unclosed group", []byte{1<<3 | StartGroup, 2 << 3, 1}, ErrGroup},
		{"wire type 6", []byte{1<<3 | 6}, ErrWireType},
		{"wire type 7", []byte{1<<3 | 7}, ErrWireType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := Next(tc.msg); !errors.Is(err, tc.want) {
				t.Errorf("Next(%x) = %v, want %v", tc.msg, err, tc.want)
			}
			m := Fields{B: tc.msg}
			if _, ok, err := m.Next(); ok || !errors.Is(err, tc.want) {
				t.Errorf("Fields.Next: ok %v, %v; want %v", ok, err, tc.want)
			}
			if _, ok, err := m.Next(); ok || err != nil {
				t.Errorf("Fields.Next after an error: ok %v, %v; want the end", ok, err)
			}
		})
	}
}

func TestCountStopsAtMalformedTail(t *testing.T) {
	msg := appendField(nil, Field{Num: 2, Type: Bytes, Bytes: []byte("a")})
	msg = appendField(msg, Field{Num: 1, Type: Varint, V: 1})
	msg = appendField(msg, Field{Num: 2, Type: Bytes, Bytes: []byte("b")})
	if n := Count(msg, 2); n != 2 {
		t.Errorf("Count = %d, want 2", n)
	}
	if n := Count(append(msg, 0x80), 2); n != 2 {
		t.Errorf("Count with a broken tail = %d, want 2", n)
	}
}

func TestNumberReadsGeneratedTags(t *testing.T) {
	typ := reflect.TypeOf(metav1.ObjectMeta{})
	for name, want := range map[string]uint64{"Name": 1, "Namespace": 3, "ResourceVersion": 6, "Labels": 11} {
		f, _ := typ.FieldByName(name)
		if got := Number(f); got != want {
			t.Errorf("Number(%s) = %d, want %d", name, got, want)
		}
	}
	if got := Number(reflect.StructField{Tag: `json:"x"`}); got != 0 {
		t.Errorf("Number of an untagged field = %d, want 0", got)
	}
}

func TestParseEnvelopeAndWatchEvent(t *testing.T) {
	tm := appendField(nil, Field{Num: 1, Type: Bytes, Bytes: []byte("v1")})
	tm = appendField(tm, Field{Num: 2, Type: Bytes, Bytes: []byte("Pod")})
	unknown := appendField(nil, Field{Num: 1, Type: Bytes, Bytes: tm})
	unknown = appendField(unknown, Field{Num: 2, Type: Bytes, Bytes: []byte("obj")})
	unknown = appendField(unknown, Field{Num: 4, Type: Bytes, Bytes: []byte("application/vnd.kubernetes.protobuf")})
	env, err := ParseEnvelope(append(append([]byte{}, Magic...), unknown...))
	if err != nil || string(env.APIVersion) != "v1" || string(env.Kind) != "Pod" || string(env.Raw) != "obj" {
		t.Fatalf("ParseEnvelope: %q %q %q, %v", env.APIVersion, env.Kind, env.Raw, err)
	}
	if _, err := ParseEnvelope(unknown); !errors.Is(err, ErrNoMagic) {
		t.Errorf("without the prefix: %v, want ErrNoMagic", err)
	}

	ext := appendField(nil, Field{Num: 1, Type: Bytes, Bytes: []byte("raw")})
	ev := appendField(nil, Field{Num: 1, Type: Bytes, Bytes: []byte("ADDED")})
	ev = appendField(ev, Field{Num: 2, Type: Bytes, Bytes: ext})
	typ, obj, err := ParseWatchEvent(ev)
	if err != nil || string(typ) != "ADDED" || string(obj) != "raw" {
		t.Fatalf("ParseWatchEvent: %q %q, %v", typ, obj, err)
	}
	if _, _, err := ParseWatchEvent(ev[:len(ev)-1]); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated event: %v, want ErrTruncated", err)
	}
}

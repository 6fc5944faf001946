package wire

import (
	"bytes"
	"testing"
)

// FuzzNext walks arbitrary bytes. It must never panic; every field's bytes
// and every rest must lie inside the input, each step must consume at
// least one byte, and re-encoding what was read (groups aside) must give
// back the bytes it was read from when the encoding was minimal.
func FuzzNext(f *testing.F) {
	f.Add([]byte{1 << 3, 150, 1, 2<<3 | Bytes, 2, 'h', 'i', 3<<3 | Fixed64, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{5<<3 | StartGroup, 1 << 3, 7, 5<<3 | EndGroup})
	f.Add([]byte{1<<3 | Bytes, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, msg []byte) {
		b := msg
		for len(b) > 0 {
			fld, rest, err := Next(b)
			if err != nil {
				if rest != nil {
					t.Fatalf("error %v with a rest of %d bytes", err, len(rest))
				}
				return
			}
			if len(rest) >= len(b) {
				t.Fatalf("Next consumed nothing of %x", b)
			}
			if len(rest) > 0 && &rest[len(rest)-1] != &b[len(b)-1] {
				t.Fatal("rest is not a suffix of the input")
			}
			if fld.Bytes != nil && len(fld.Bytes) > 0 && !inside(fld.Bytes, b) {
				t.Fatal("field bytes outside the input")
			}
			if fld.Type != StartGroup {
				enc := appendField(nil, fld)
				if consumed := b[:len(b)-len(rest)]; len(enc) == len(consumed) && !bytes.Equal(enc, consumed) {
					t.Fatalf("re-encoded %+v as %x, read from %x", fld, enc, consumed)
				}
			}
			b = rest
		}
	})
}

// inside reports whether sub lies within b's backing array range.
func inside(sub, b []byte) bool {
	if len(sub) > len(b) {
		return false
	}
	for i := 0; i+len(sub) <= len(b); i++ {
		if &b[i] == &sub[0] {
			return true
		}
	}
	return false
}

// FuzzParseEnvelope: arbitrary bytes behind the prefix never panic, what
// comes back aliases the input, and the same bytes read as a watch event
// never panic either.
func FuzzParseEnvelope(f *testing.F) {
	f.Add([]byte{0x0a, 0x08, 0x0a, 0x02, 'v', '1', 0x12, 0x02, 'P', 'o', 0x12, 0x01, 'x'})
	f.Add([]byte{0x0a, 0x05, 0x0a, 0x10})
	f.Fuzz(func(t *testing.T, rest []byte) {
		typ, obj, err := ParseWatchEvent(rest)
		if err == nil && (len(typ) > 0 && !inside(typ, rest) || len(obj) > 0 && !inside(obj, rest)) {
			t.Fatal("watch event part outside the input")
		}
		data := append(append([]byte{}, Magic...), rest...)
		env, err := ParseEnvelope(data)
		if err != nil {
			return
		}
		for _, s := range [][]byte{env.APIVersion, env.Kind, env.Raw} {
			if len(s) > 0 && !inside(s, data) {
				t.Fatal("envelope part outside the input")
			}
		}
	})
}

package wire

import (
	"bytes"
	"errors"
)

// Magic starts every protobuf-encoded object the apiserver sends (followed
// by a runtime.Unknown envelope).
var Magic = []byte{0x6b, 0x38, 0x73, 0x00}

// ErrNoMagic is the error of an object without Magic.
var ErrNoMagic = errors.New("protobuf object without the k8s prefix")

// Envelope is a decoded runtime.Unknown: the object's type and its bytes.
type Envelope struct {
	APIVersion, Kind []byte
	Raw              []byte
}

// ParseEnvelope reads Magic and the runtime.Unknown that wraps a protobuf
// object (a list body, a Status, or the object of a watch event).
func ParseEnvelope(data []byte) (Envelope, error) {
	var env Envelope
	if !bytes.HasPrefix(data, Magic) {
		return env, ErrNoMagic
	}
	m := Fields{B: data[len(Magic):]}
	for {
		f, ok, err := m.Next()
		if err != nil || !ok {
			return env, err
		}
		if f.Type != Bytes {
			continue
		}
		switch f.Num {
		case 1: // typeMeta
			tm := Fields{B: f.Bytes}
			for {
				t, ok, err := tm.Next()
				if err != nil {
					return env, err
				}
				if !ok {
					break
				}
				if t.Type == Bytes && t.Num == 1 {
					env.APIVersion = t.Bytes
				} else if t.Type == Bytes && t.Num == 2 {
					env.Kind = t.Bytes
				}
			}
		case 2:
			env.Raw = f.Bytes
		}
	}
}

// ParseWatchEvent reads a metav1.WatchEvent (the payload of one protobuf
// watch frame): its type and the bytes of its embedded object.
func ParseWatchEvent(frame []byte) (typ, object []byte, err error) {
	m := Fields{B: frame}
	for {
		f, ok, err := m.Next()
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return typ, object, nil
		}
		if f.Type != Bytes {
			continue
		}
		switch f.Num {
		case 1:
			typ = f.Bytes
		case 2: // RawExtension
			raw := Fields{B: f.Bytes}
			for {
				r, ok, err := raw.Next()
				if err != nil {
					return nil, nil, err
				}
				if !ok {
					break
				}
				if r.Num == 1 && r.Type == Bytes {
					object = r.Bytes
				}
			}
		}
	}
}

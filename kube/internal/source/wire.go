package source

import (
	"errors"
	"fmt"

	"github.com/kinformer/kinformer/internal/wire"
)

// The protobuf envelopes the apiserver wraps objects in are read by package
// wire, without copying: every []byte they hold aliases the input. Decoding
// the objects themselves is left to their generated Unmarshal methods, which
// copy what they keep, so the input buffer may be reused afterwards.

// ErrMalformed is wrapped by the error of a response that does not decode
// (kube.ErrMalformed is this error).
var ErrMalformed = errors.New("malformed response")

// malformed wraps an error of package wire in ErrMalformed.
func malformed(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrMalformed, err)
}

// parseEnvelope reads the magic prefix and the runtime.Unknown that wraps a
// protobuf object (a list body, or the object of a watch event).
func parseEnvelope(data []byte) (wire.Envelope, error) {
	env, err := wire.ParseEnvelope(data)
	return env, malformed(err)
}

// parseWatchEvent reads a metav1.WatchEvent (the payload of one watch
// frame): its type and the bytes of its embedded object.
func parseWatchEvent(frame []byte) (typ, object []byte, err error) {
	typ, object, err = wire.ParseWatchEvent(frame)
	return typ, object, malformed(err)
}

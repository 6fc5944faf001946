package source

import (
	"fmt"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/project"
)

// ObjectCodec is how a source's objects are written to a checkpoint file
// and read back, for sources whose objects have no encoding of their own
// (views). Name names the encoding in the file's identity. Err, when set,
// says why the objects cannot be kept in a file; the other fields are
// then nil.
type ObjectCodec[T cache.Object] struct {
	Name   string
	Encode func(dst []byte, obj T) ([]byte, error)
	Decode func(data []byte) (T, error)
	Err    error
}

// viewObjectCodec keeps views as plan.EncodeProto writes them, read back
// through plan and strs (nil: no interning).
func viewObjectCodec[T cache.Object](plan *project.Plan, strs *project.Strings) ObjectCodec[T] {
	if err := plan.CheckEncode(); err != nil {
		return ObjectCodec[T]{Err: fmt.Errorf("%v cannot be kept in a checkpoint: %w", plan.Type(), err)}
	}
	return ObjectCodec[T]{
		// The fields a view holds are part of the encoding: a view type
		// changed between two runs (its Go type name kept) must not read
		// the other's file, so the name carries a digest of the plan.
		Name: "view-protobuf-" + plan.Digest(),
		Encode: func(dst []byte, obj T) ([]byte, error) {
			return plan.EncodeProto(dst, obj)
		},
		Decode: func(data []byte) (T, error) {
			v := plan.New()
			if err := plan.DecodeProto(data, v, strs); err != nil {
				var zero T
				return zero, fmt.Errorf("%w: %v: %w", ErrMalformed, plan.Type(), err)
			}
			return v.(T), nil
		},
	}
}

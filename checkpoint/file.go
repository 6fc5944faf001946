package checkpoint

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/kinformer/kinformer/cache"
)

// Codec turns objects into bytes and back. Name is stored in each
// checkpoint, and a checkpoint is read only with a codec of the same Name.
type Codec[T cache.Object] struct {
	Name string
	// Encode appends obj's encoding to dst.
	Encode func(dst []byte, obj T) ([]byte, error)
	// Decode makes a new object from data, which it must not keep (the
	// buffer is reused). Decode reads large checkpoints on several
	// goroutines: it must be safe for concurrent use.
	Decode func(data []byte) (T, error)
}

// protoMessage is implemented by every generated Kubernetes API type
// (and metav1.PartialObjectMetadata).
type protoMessage interface {
	Size() int
	MarshalToSizedBuffer(dAtA []byte) (int, error)
	Unmarshal(dAtA []byte) error
}

// DefaultCodec is the codec for T when none is given: protobuf (Name
// "protobuf") when T is a pointer to a generated Kubernetes API type,
// otherwise JSON ("json", through T's own MarshalJSON and UnmarshalJSON
// when it has them, as *unstructured.Unstructured does). T must be a
// pointer type.
func DefaultCodec[T cache.Object]() (Codec[T], error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer {
		return Codec[T]{}, fmt.Errorf("checkpoint: %v is not a pointer type", t)
	}
	elem := t.Elem()
	newT := func() T { return reflect.New(elem).Interface().(T) }
	if t.Implements(reflect.TypeFor[protoMessage]()) {
		return Codec[T]{
			Name: "protobuf",
			Encode: func(dst []byte, obj T) ([]byte, error) {
				m := any(obj).(protoMessage)
				n := m.Size()
				dst = append(dst, make([]byte, n)...)
				if _, err := m.MarshalToSizedBuffer(dst[len(dst)-n:]); err != nil {
					return dst, err
				}
				return dst, nil
			},
			Decode: func(data []byte) (T, error) {
				obj := newT()
				return obj, any(obj).(protoMessage).Unmarshal(data)
			},
		}, nil
	}
	return Codec[T]{
		Name: "json",
		Encode: func(dst []byte, obj T) ([]byte, error) {
			b, err := json.Marshal(obj)
			return append(dst, b...), err
		},
		Decode: func(data []byte) (T, error) {
			obj := newT()
			return obj, json.Unmarshal(data, obj)
		},
	}, nil
}

// TypeName is the name Identity.Type gives T.
func TypeName[T cache.Object]() string { return reflect.TypeFor[T]().String() }

// Path is the file of id's checkpoint in dir: a readable prefix from the
// resource (so an operator can tell the files apart) and a hash of the
// identity but its Cluster (so that two selections of one resource never
// share a file). The cluster is left out so that a path can be named
// before the cluster is known: a file of another cluster in the same
// directory is refused by Read (ErrOtherCluster) and replaced by the next
// Write.
func Path(dir string, id Identity) string {
	h := fnv.New64a()
	for _, s := range []string{id.Resource, id.Type, id.Encoding} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var b strings.Builder
	for _, r := range id.Resource {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	return filepath.Join(dir, fmt.Sprintf("%s-%016x.ckpt", b.String(), h.Sum64()))
}

// Write stores snap, which belongs to id, at path: in a temporary file of
// the same directory (mode 0600), synced, then renamed over path and the
// directory synced, so that path always holds a whole checkpoint, the old
// one or the new. The directory is created (mode 0700) if missing.
func Write[T cache.Object](path string, id Identity, codec Codec[T], snap Snapshot[T]) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := Encode(f, id, codec, snap); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("checkpoint: sync %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("checkpoint: close %s: %w", f.Name(), err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename itself: best effort, not every file system can
		d.Close()
	}
	return nil
}

// Read loads the checkpoint at path (see Decode). A missing file is an
// error matching os.ErrNotExist: no checkpoint yet, not a bad one. A path
// that is not a regular file, or a symbolic link to one, is ErrNotRegular:
// it is opened without blocking (a FIFO with no writer, a device) and
// closed unread.
func Read[T cache.Object](path string, id Identity, codec Codec[T]) (Snapshot[T], error) {
	f, err := openRegular(path)
	if err != nil {
		return Snapshot[T]{}, fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	snap, err := Decode(f, id, codec)
	if err != nil {
		return Snapshot[T]{}, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return snap, nil
}

// ReadHeader reads the header of the checkpoint at path and checks that
// it belongs to id (see DecodeHeader), without reading its objects. Its
// errors are Read's for the same file; a file whose header passes may
// still fail Read (a corrupt object, a bad checksum).
func ReadHeader(path string, id Identity) (Header, error) {
	f, err := openRegular(path)
	if err != nil {
		return Header{}, fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	h, err := DecodeHeader(f, id)
	if err != nil {
		return Header{}, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return h, nil
}

// openRegular opens path for reading if it is a regular file. The open
// itself cannot block (openFlags), and the check is made on the opened
// file, so that nothing swapped in between the check and the open is read.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s is %s", ErrNotRegular, path, describeMode(fi.Mode()))
	}
	return f, nil
}

// describeMode names the kind of file m is.
func describeMode(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file (mode " + m.String() + ")"
}

package checkpoint

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"

	"github.com/kinformer/kinformer/cache"
)

// File is a checkpoint whose header has been read and checked (Open), its
// objects not yet: what a restart needs to ask the server about the
// checkpoint's version before paying for its objects. A File holds the
// file open, so that the objects read later are those of the header read
// first even if a new checkpoint is renamed over the path meanwhile. Close
// it when done.
type File[T cache.Object] struct {
	// ResourceVersion, Written and Count are the header's: the version the
	// objects reflect, when they were written, how many there are.
	ResourceVersion string
	Written         time.Time
	Count           int

	path  string
	f     *os.File
	sr    *summingReader // has read the header, and nothing after it
	codec Codec[T]
	used  bool // Items was called
}

// Open opens the checkpoint at path and reads its header only, with the
// checks of Read that need no more: the path is a regular file
// (ErrNotRegular), of this format version (ErrVersion), with a well-formed
// header (ErrCorrupt) of id (ErrMismatch, ErrOtherCluster). A missing file
// is an error matching os.ErrNotExist. The objects, the trailer and the
// checksum are read by Items.
func Open[T cache.Object](path string, id Identity, codec Codec[T]) (*File[T], error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	sr := &summingReader{r: bufio.NewReaderSize(f, 256<<10), sum: crc32.New(castagnoli)}
	h, err := readHeader(sr, id)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return &File[T]{ResourceVersion: h.ResourceVersion, Written: h.Written, Count: h.Count,
		path: path, f: f, sr: sr, codec: codec}, nil
}

// Items reads and decodes the file's objects, in no particular order, and
// checks the rest of the file (ErrCorrupt): every object decodes, the
// trailer follows the last one, and the checksum of the whole file
// matches. Any failed check returns no objects. It can be called once.
//
// With offer nil, one pass reads and checks. With offer set, a first pass
// checks the whole file's checksum without decoding anything, then the
// objects are decoded and handed to offer batch by batch as they are
// decoded, from several goroutines at once: offer only sees objects of a
// file whose bytes are the ones written, and sees them long before the
// last one is decoded. The objects it is handed are those Items returns
// (if it returns them: a record that fails to decode still fails Items,
// after offer has seen others).
func (f *File[T]) Items(offer func([]T)) ([]T, error) {
	if f.used {
		return nil, fmt.Errorf("checkpoint %s: Items called twice", f.path)
	}
	f.used = true
	sr := f.sr
	if offer != nil {
		start := sr.n // the header is read, and nothing after it
		if err := f.checkSum(); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", f.path, err)
		}
		if _, err := f.f.Seek(start, io.SeekStart); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", f.path, err)
		}
		sr = &summingReader{r: bufio.NewReaderSize(f.f, 256<<10), n: start}
	}
	items, err := readBody(sr, f.Count, f.codec, offer)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", f.path, err)
	}
	return items, nil
}

// checkSum checks the checksum of the whole file: the CRC-32C of every
// byte but the last four, which are that CRC.
func (f *File[T]) checkSum() error {
	fi, err := f.f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size < 4 {
		return corrupt(size, "the checksum", io.ErrUnexpectedEOF)
	}
	sum := crc32.New(castagnoli)
	if _, err := io.Copy(sum, io.NewSectionReader(f.f, 0, size-4)); err != nil {
		return fmt.Errorf("%w: reading: %w", ErrCorrupt, err)
	}
	var got [4]byte
	if _, err := f.f.ReadAt(got[:], size-4); err != nil {
		return corrupt(size-4, "the checksum", err)
	}
	if g, want := binary.BigEndian.Uint32(got[:]), sum.Sum32(); g != want {
		return fmt.Errorf("%w: checksum %08x, content sums to %08x", ErrCorrupt, g, want)
	}
	return nil
}

// Close closes the file.
func (f *File[T]) Close() error { return f.f.Close() }

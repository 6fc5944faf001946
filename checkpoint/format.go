package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/kinformer/kinformer/cache"
)

// Version is the format version Write produces and Read accepts. Version
// 2 added the cluster to the identity; a version 1 file is refused
// (ErrVersion), so the first start after an upgrade is a cold one.
const Version = 2

const (
	magic   = "KINFCKPT"
	trailer = "END!"
	// maxHeader and maxRecord bound what a corrupt length can make Read
	// allocate.
	maxHeader = 1 << 20
	maxRecord = 64 << 20
)

// Errors Read returns, wrapped with detail (errors.Is matches them).
var (
	// ErrCorrupt: the file is truncated, malformed, or its checksum does
	// not match its content.
	ErrCorrupt = errors.New("checkpoint corrupt")
	// ErrVersion: the file is of a format version this code does not read.
	ErrVersion = errors.New("checkpoint of another format version")
	// ErrMismatch: the file belongs to another informer: another cluster,
	// resource, selection, object type or encoding.
	ErrMismatch = errors.New("checkpoint of another informer")
	// ErrOtherCluster: the file was written for another cluster (or for
	// an unknown one). It wraps ErrMismatch.
	ErrOtherCluster = fmt.Errorf("%w: written for another cluster", ErrMismatch)
	// ErrNotRegular: the path is not a regular file (a directory, FIFO,
	// device or socket, or a symbolic link to one). Read refuses it
	// without reading from it, so it never blocks on a FIFO or a device.
	ErrNotRegular = errors.New("checkpoint path is not a regular file")
)

// Identity is what a checkpoint belongs to. Read loads a checkpoint only
// into the Identity that wrote it, field for field.
type Identity struct {
	// Cluster names the cluster the objects came from: for a kube.Factory
	// informer, the uid of the cluster's kube-system namespace, read from
	// the server. A checkpoint is read only into an Identity naming the
	// same, non-empty cluster, so that a file copied from another cluster
	// (or left in a shared directory) is never served as this one's.
	Cluster string `json:"cluster"`
	// Resource names the resource and which of its objects are cached:
	// for a kube.Factory informer, its Key (source kind, group, version,
	// resource, namespace, label, field and shard selectors).
	Resource string `json:"resource"`
	// Type is the Go type of the objects, such as "*v1.Pod".
	Type string `json:"type"`
	// Encoding is the Codec's Name.
	Encoding string `json:"encoding"`
}

// Snapshot is what a checkpoint holds.
type Snapshot[T cache.Object] struct {
	// ResourceVersion is the version of the server's state the objects
	// are: the cache had applied every change up to it and no later one.
	ResourceVersion string
	// Items are the cached objects, in no particular order.
	Items []T
	// Written is when the checkpoint was written (set by Encode when
	// zero).
	Written time.Time
}

// header is the JSON header of a checkpoint file.
type header struct {
	Identity        Identity  `json:"identity"`
	ResourceVersion string    `json:"resourceVersion"`
	Count           int       `json:"count"`
	Written         time.Time `json:"written"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode writes snap, which belongs to id, to w in the checkpoint format,
// each object encoded with codec.
func Encode[T cache.Object](w io.Writer, id Identity, codec Codec[T], snap Snapshot[T]) error {
	if snap.Written.IsZero() {
		snap.Written = time.Now()
	}
	sum := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, sum), 256<<10)
	h, err := json.Marshal(header{Identity: id, ResourceVersion: snap.ResourceVersion, Count: len(snap.Items), Written: snap.Written.UTC()})
	if err != nil {
		return fmt.Errorf("checkpoint: header: %w", err)
	}
	bw.WriteString(magic)
	bw.Write(binary.BigEndian.AppendUint16(nil, Version))
	bw.Write(binary.BigEndian.AppendUint32(nil, uint32(len(h))))
	bw.Write(h)
	var buf, n []byte
	for i, obj := range snap.Items {
		if buf, err = codec.Encode(buf[:0], obj); err != nil {
			return fmt.Errorf("checkpoint: encode object %d (%s/%s): %w", i, obj.GetNamespace(), obj.GetName(), err)
		}
		n = binary.AppendUvarint(n[:0], uint64(len(buf)))
		bw.Write(n)
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("checkpoint: write: %w", err)
		}
	}
	bw.WriteString(trailer)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("checkpoint: write: %w", err)
	}
	if _, err := w.Write(sum.Sum(nil)); err != nil {
		return fmt.Errorf("checkpoint: write: %w", err)
	}
	return nil
}

// summingReader computes the checksum of what is read through it.
type summingReader struct {
	r   *bufio.Reader
	sum hash.Hash32
	n   int64 // bytes read
}

func (s *summingReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.sum.Write(p[:n])
	s.n += int64(n)
	return n, err
}

func (s *summingReader) ReadByte() (byte, error) {
	b, err := s.r.ReadByte()
	if err == nil {
		s.sum.Write([]byte{b})
		s.n++
	}
	return b, err
}

// corrupt builds an ErrCorrupt error; an io.EOF cause means truncation.
func corrupt(at int64, what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: truncated at byte %d, in %s", ErrCorrupt, at, what)
	}
	switch {
	case err != nil && at < 0: // position unknown (decoded off the reading goroutine)
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, what, err)
	case err != nil:
		return fmt.Errorf("%w: byte %d, %s: %w", ErrCorrupt, at, what, err)
	}
	return fmt.Errorf("%w: byte %d: %s", ErrCorrupt, at, what)
}

// Header is what a checkpoint says of itself before its objects.
type Header struct {
	// ResourceVersion is the version of the server's state the objects
	// are (Snapshot.ResourceVersion).
	ResourceVersion string
	// Count is how many objects follow.
	Count int
	// Written is when the checkpoint was written.
	Written time.Time
}

// DecodeHeader reads a checkpoint's header from r and checks that it
// belongs to id, reading no object: enough to ask the server about its
// resource version before paying for the objects. Its errors are Decode's
// (the objects and the checksum are not checked: Decode does that).
func DecodeHeader(r io.Reader, id Identity) (Header, error) {
	sr := &summingReader{r: bufio.NewReaderSize(r, 4<<10), sum: crc32.New(castagnoli)}
	h, err := decodeHeader(sr, id)
	if err != nil {
		return Header{}, err
	}
	return Header{ResourceVersion: h.ResourceVersion, Count: h.Count, Written: h.Written}, nil
}

// decodeHeader reads the fixed part and the header from sr, and checks
// them against id.
func decodeHeader(sr *summingReader, id Identity) (header, error) {
	var fixed [len(magic) + 2 + 4]byte
	if _, err := io.ReadFull(sr, fixed[:]); err != nil {
		return header{}, corrupt(sr.n, "the file header", err)
	}
	if string(fixed[:len(magic)]) != magic {
		return header{}, corrupt(0, "not a kinformer checkpoint (bad magic)", nil)
	}
	if v := binary.BigEndian.Uint16(fixed[len(magic):]); v != Version {
		return header{}, fmt.Errorf("%w: version %d, this build reads %d", ErrVersion, v, Version)
	}
	hl := binary.BigEndian.Uint32(fixed[len(magic)+2:])
	if hl > maxHeader {
		return header{}, corrupt(sr.n, fmt.Sprintf("header of %d bytes", hl), nil)
	}
	hb := make([]byte, hl)
	if _, err := io.ReadFull(sr, hb); err != nil {
		return header{}, corrupt(sr.n, "the header", err)
	}
	var h header
	dec := json.NewDecoder(bytes.NewReader(hb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return header{}, corrupt(sr.n, "the header", err)
	}
	if h.Count < 0 || h.Count > maxRecord {
		return header{}, corrupt(sr.n, fmt.Sprintf("object count %d", h.Count), nil)
	}
	if err := match(h.Identity, id); err != nil {
		return header{}, err
	}
	return h, nil
}

// Decode reads a checkpoint from r, checks that it belongs to id and was
// encoded with codec, and decodes its objects. Any failed check is an
// error (ErrCorrupt, ErrVersion, ErrMismatch) and returns no objects: a
// checkpoint is loaded whole or not at all. It reads r to its end.
func Decode[T cache.Object](r io.Reader, id Identity, codec Codec[T]) (Snapshot[T], error) {
	sr := &summingReader{r: bufio.NewReaderSize(r, 256<<10), sum: crc32.New(castagnoli)}
	h, err := decodeHeader(sr, id)
	if err != nil {
		return Snapshot[T]{}, err
	}
	items, err := decodeObjects(sr, h.Count, codec)
	if err != nil {
		return Snapshot[T]{}, err
	}
	snap := Snapshot[T]{ResourceVersion: h.ResourceVersion, Written: h.Written, Items: items}
	var end [len(trailer)]byte
	if _, err := io.ReadFull(sr, end[:]); err != nil {
		return Snapshot[T]{}, corrupt(sr.n, "the trailer", err)
	}
	if string(end[:]) != trailer {
		return Snapshot[T]{}, corrupt(sr.n, "no trailer after the last object", nil)
	}
	want := sr.sum.Sum32()
	var got [4]byte
	if _, err := io.ReadFull(sr.r, got[:]); err != nil {
		return Snapshot[T]{}, corrupt(sr.n, "the checksum", err)
	}
	if g := binary.BigEndian.Uint32(got[:]); g != want {
		return Snapshot[T]{}, fmt.Errorf("%w: checksum %08x, content sums to %08x", ErrCorrupt, g, want)
	}
	if _, err := sr.r.ReadByte(); err != io.EOF {
		return Snapshot[T]{}, corrupt(sr.n+4, "bytes after the checksum", nil)
	}
	return snap, nil
}

// match checks a checkpoint's identity against the reader's.
func match(got, want Identity) error {
	switch {
	case want.Cluster == "":
		return fmt.Errorf("%w: this informer's cluster is unknown", ErrOtherCluster)
	case got.Cluster != want.Cluster:
		return fmt.Errorf("%w: written for cluster %q, this is %q", ErrOtherCluster, got.Cluster, want.Cluster)
	case got.Resource != want.Resource:
		return fmt.Errorf("%w: written for %q, not %q", ErrMismatch, got.Resource, want.Resource)
	case got.Type != want.Type:
		return fmt.Errorf("%w: objects of type %s, not %s", ErrMismatch, got.Type, want.Type)
	case got.Encoding != want.Encoding:
		return fmt.Errorf("%w: objects encoded as %s, not %s", ErrMismatch, got.Encoding, want.Encoding)
	}
	return nil
}

// Decoding objects on several goroutines: the file is read in batches of
// decodeBatch records, each decoded by one of up to maxDecoders workers.
// On the warm-restart scenario (20,000 pods) decoding is most of a
// restart's time; two workers on two cores overlap the protobuf decoding,
// and the source's interning, behind its lock, takes what is left. The
// buffers of decoded batches are handed back to the reader (BenchmarkRead:
// 61 MB allocated per read of 20,000 pods instead of 70 MB).
const (
	decodeBatch = 256
	maxDecoders = 4
)

// readRecord reads one length-prefixed record, the i-th of count, into
// buf (grown as needed) and returns it.
func readRecord(sr *summingReader, buf []byte, i, count int) ([]byte, error) {
	n, err := binary.ReadUvarint(sr)
	if err != nil {
		return nil, corrupt(sr.n, fmt.Sprintf("the length of object %d of %d", i, count), err)
	}
	if n > maxRecord {
		return nil, corrupt(sr.n, fmt.Sprintf("object %d of %d bytes", i, n), nil)
	}
	start := len(buf)
	buf = append(buf, make([]byte, n)...)
	if _, err := io.ReadFull(sr, buf[start:]); err != nil {
		return nil, corrupt(sr.n, fmt.Sprintf("object %d of %d", i, count), err)
	}
	return buf, nil
}

// decodeObjects reads count records from sr and decodes them with codec,
// on several goroutines when there are enough of them (Codec.Decode must
// then be safe for concurrent use), returning them in no particular order.
// Every goroutine it starts has exited when it returns.
func decodeObjects[T cache.Object](sr *summingReader, count int, codec Codec[T]) ([]T, error) {
	workers := min(runtime.GOMAXPROCS(0), maxDecoders)
	if workers < 2 || count < 2*decodeBatch {
		items := make([]T, 0, min(count, 1<<16))
		var buf []byte
		for i := range count {
			var err error
			if buf, err = readRecord(sr, buf[:0], i, count); err != nil {
				return nil, err
			}
			obj, err := codec.Decode(buf)
			if err != nil {
				return nil, corrupt(sr.n, fmt.Sprintf("object %d of %d", i, count), err)
			}
			items = append(items, obj)
		}
		return items, nil
	}

	// batch is decodeBatch records (or the last ones): their bytes back to
	// back in data, record j ending at ends[j]; the first is record first.
	type batch struct {
		data  []byte
		ends  []int
		first int
	}
	var (
		work = make(chan batch, workers) // closed by the reader below when done
		// free holds the buffers of decoded batches for the reader to
		// fill again: a batch's bytes are read into one that has reached
		// its size instead of growing a new one record by record.
		free    = make(chan batch, workers+1)
		done    = make(chan struct{}) // closed by the first failure
		errOnce sync.Once
		failure error
		results = make([][]T, workers)
		wg      sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { failure = err; close(done) })
	}
	for w := range workers {
		wg.Go(func() {
			for b := range work { // drained to the end even after a failure
				select {
				case <-done:
					continue
				default:
				}
				start := 0
				for j, end := range b.ends {
					obj, err := codec.Decode(b.data[start:end])
					if err != nil {
						fail(corrupt(-1, fmt.Sprintf("object %d of %d", b.first+j, count), err))
						break
					}
					results[w] = append(results[w], obj)
					start = end
				}
				select { // Decode keeps nothing of the bytes
				case free <- batch{data: b.data[:0], ends: b.ends[:0]}:
				default:
				}
			}
		})
	}
read:
	for first := 0; first < count; first += decodeBatch {
		var b batch
		select {
		case b = <-free:
		default:
			b.ends = make([]int, 0, decodeBatch)
		}
		b.first = first
		for i := first; i < min(first+decodeBatch, count); i++ {
			var err error
			if b.data, err = readRecord(sr, b.data, i, count); err != nil {
				fail(err)
				break read
			}
			b.ends = append(b.ends, len(b.data))
		}
		select {
		case work <- b:
		case <-done:
			break read
		}
	}
	close(work)
	wg.Wait()
	if failure != nil {
		return nil, failure
	}
	items := make([]T, 0, count)
	for _, r := range results {
		items = append(items, r...)
	}
	return items, nil
}

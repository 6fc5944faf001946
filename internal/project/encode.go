package project

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"time"
	"unsafe"

	"github.com/kinformer/kinformer/internal/wire"
	"k8s.io/apimachinery/pkg/api/resource"
)

// EncodeProto appends to dst the protobuf encoding of a full object that
// DecodeProto decodes back into a view equal to src (a *V as New
// returns): each field the view holds, written at its path in the full
// type, and nothing else. It is how a view is kept in a checkpoint file:
// read back through DecodeProto, its strings are interned as after a
// list. Zero values are left out (DecodeProto leaves them zero), except
// behind a non-nil pointer. Call CheckEncode first: a plan it refuses
// would not read its encoding back as it was.
func (p *Plan) EncodeProto(dst []byte, src any) ([]byte, error) {
	if !p.proto {
		return dst, fmt.Errorf("project: plan of %v compiled for JSON only", p.view)
	}
	ptr, err := p.ptrOf(src)
	if err != nil {
		return dst, err
	}
	var err2 error
	dst = encodeMsg(dst, p.root, ptr, &err2)
	return dst, err2
}

// CheckEncode reports whether EncodeProto's output decodes back into the
// same view: not when two fields of the view read one field of the full
// type as a whole (both would be written there and each would read both:
// a list, read twice, would double), nor for a plan compiled for JSON.
func (p *Plan) CheckEncode() error {
	if !p.proto {
		return fmt.Errorf("project: %v is decoded from JSON only", p.view)
	}
	return checkMsg(p.view, p.root, "")
}

func checkMsg(view reflect.Type, m *msg, path string) error {
	for name, as := range m.byName {
		whole, subs := 0, 0
		for _, a := range as {
			switch {
			case a.sub != nil:
				subs++
				if err := checkMsg(view, a.sub, joinPath(path, name)); err != nil {
					return err
				}
			case !a.keyed:
				whole++
				fallthrough
			default:
				if err := checkNode(view, a.node, joinPath(path, name)); err != nil {
					return err
				}
			}
		}
		if whole > 1 || (whole == 1 && subs > 0) {
			return fmt.Errorf("project: %v reads %s in two fields: it cannot be written back", view, joinPath(path, name))
		}
	}
	return nil
}

// checkNode checks the messages under n, and that a field decoded by
// its generated code can be encoded by it.
func checkNode(view reflect.Type, n *node, path string) error {
	switch n.op {
	case opPtr, opSlice, opMap, opStringMap, opPairs:
		return checkNode(view, n.elem, path)
	case opStruct:
		return checkMsg(view, n.msg, path)
	case opMessage:
		if !reflect.PointerTo(n.typ).Implements(reflect.TypeFor[protoMarshaler]()) {
			return fmt.Errorf("project: %v reads %s as %v, which has no generated protobuf Marshal", view, path, n.typ)
		}
	}
	return nil
}

// numbered returns m's field numbers in order, with their actions.
func numbered(m *msg) []uint64 {
	nums := make([]uint64, 0, len(m.byNum)+len(m.bigNum))
	for n, as := range m.byNum {
		if len(as) > 0 {
			nums = append(nums, uint64(n))
		}
	}
	small := len(nums)
	for n := range m.bigNum {
		nums = append(nums, n)
	}
	slices.Sort(nums[small:])
	return nums
}

func appendKey(dst []byte, num uint64, wt int) []byte {
	return binary.AppendUvarint(dst, num<<3|uint64(wt))
}

// nested appends field num, a message written by fill, with its length.
// Nothing is appended when fill writes nothing and keep is false.
func nested(dst []byte, num uint64, keep bool, fill func([]byte) []byte) []byte {
	start := len(dst)
	dst = appendKey(dst, num, wire.Bytes)
	dst = append(dst, 0) // a one-byte length, moved when longer
	body := len(dst)
	dst = fill(dst)
	size := len(dst) - body
	if size == 0 && !keep {
		return dst[:start]
	}
	if size < 0x80 {
		dst[body-1] = byte(size)
		return dst
	}
	var l [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(l[:], uint64(size))
	dst = append(dst, l[:n-1]...)
	copy(dst[body+n-1:], dst[body:body+size])
	copy(dst[body-1:], l[:n])
	return dst
}

// encodeMsg appends the fields of m read from the view at base.
func encodeMsg(dst []byte, m *msg, base unsafe.Pointer, errp *error) []byte {
	for _, num := range numbered(m) {
		for _, a := range m.forNum(num) {
			switch {
			case a.sub != nil:
				dst = nested(dst, num, false, func(b []byte) []byte { return encodeMsg(b, a.sub, base, errp) })
			case a.keyed:
				dst = encodeEntry(dst, num, a.key, a.node, add(base, a.off), false, errp)
			default:
				dst = encodeValue(dst, num, a.node, add(base, a.off), false, errp)
			}
		}
	}
	return dst
}

// encodeEntry appends a map entry of key and the value at p, unless the
// value is zero and keep is false.
func encodeEntry(dst []byte, num uint64, key string, n *node, p unsafe.Pointer, keep bool, errp *error) []byte {
	if !keep && isZero(n, p) {
		return dst
	}
	return nested(dst, num, true, func(b []byte) []byte {
		b = appendKey(b, 1, wire.Bytes)
		b = binary.AppendUvarint(b, uint64(len(key)))
		b = append(b, key...)
		return encodeValue(b, 2, n, p, true, errp)
	})
}

// isZero reports whether the value at p is what DecodeProto leaves when
// the field is absent.
func isZero(n *node, p unsafe.Pointer) bool {
	switch n.op {
	case opPtr:
		return *(*unsafe.Pointer)(p) == nil
	case opSlice:
		return (*sliceHeader)(p).len == 0
	}
	return reflect.NewAt(n.typ, p).Elem().IsZero()
}

// encodeValue appends field num holding the value at p; a zero value is
// left out unless keep (an element of a list or map, or behind a
// pointer).
func encodeValue(dst []byte, num uint64, n *node, p unsafe.Pointer, keep bool, errp *error) []byte {
	if !keep && isZero(n, p) {
		return dst
	}
	switch n.op {
	case opPtr:
		e := *(*unsafe.Pointer)(p)
		if e == nil {
			return dst
		}
		return encodeValue(dst, num, n.elem, e, true, errp)
	case opSlice:
		h := (*sliceHeader)(p)
		for i := 0; i < h.len; i++ {
			dst = encodeValue(dst, num, n.elem, add(h.data, uintptr(i)*n.size), true, errp)
		}
		return dst
	case opInt:
		var v int64
		switch n.size {
		case 1:
			v = int64(*(*int8)(p))
		case 2:
			v = int64(*(*int16)(p))
		case 4:
			v = int64(*(*int32)(p))
		default:
			v = *(*int64)(p)
		}
		return binary.AppendUvarint(appendKey(dst, num, wire.Varint), uint64(v))
	case opUint:
		var v uint64
		switch n.size {
		case 1:
			v = uint64(*(*uint8)(p))
		case 2:
			v = uint64(*(*uint16)(p))
		case 4:
			v = uint64(*(*uint32)(p))
		default:
			v = *(*uint64)(p)
		}
		return binary.AppendUvarint(appendKey(dst, num, wire.Varint), v)
	case opBool:
		v := uint64(0)
		if *(*bool)(p) {
			v = 1
		}
		return binary.AppendUvarint(appendKey(dst, num, wire.Varint), v)
	case opFloat:
		v := math.Float64bits(*(*float64)(p))
		if n.size == 4 {
			v = math.Float64bits(float64(*(*float32)(p)))
		}
		return binary.LittleEndian.AppendUint64(appendKey(dst, num, wire.Fixed64), v)
	case opString:
		s := *(*string)(p)
		dst = binary.AppendUvarint(appendKey(dst, num, wire.Bytes), uint64(len(s)))
		return append(dst, s...)
	case opStruct:
		return nested(dst, num, true, func(b []byte) []byte { return encodeMsg(b, n.msg, p, errp) })
	case opTime:
		t := *(*time.Time)(p)
		return nested(dst, num, true, func(b []byte) []byte {
			if t.IsZero() {
				return b
			}
			b = binary.AppendUvarint(appendKey(b, 1, wire.Varint), uint64(t.Unix()))
			if ns := t.Nanosecond(); n.micro && ns != 0 {
				b = binary.AppendUvarint(appendKey(b, 2, wire.Varint), uint64(ns))
			}
			return b
		})
	case opQuantity:
		q := (*resource.Quantity)(p)
		return nested(dst, num, true, func(b []byte) []byte {
			s := q.String()
			b = binary.AppendUvarint(appendKey(b, 1, wire.Bytes), uint64(len(s)))
			return append(b, s...)
		})
	case opPairs:
		kv := *(*[]string)(p)
		for i := 0; i+1 < len(kv); i += 2 {
			dst = encodeEntry(dst, num, kv[i], n.elem, unsafe.Pointer(&kv[i+1]), true, errp)
		}
		return dst
	case opStringMap, opMap:
		it := reflect.NewAt(n.typ, p).Elem().MapRange()
		for it.Next() {
			v := reflect.New(n.typ.Elem())
			v.Elem().Set(it.Value())
			dst = encodeEntry(dst, num, it.Key().String(), n.elem, v.UnsafePointer(), true, errp)
		}
		return dst
	case opMessage:
		m := reflect.NewAt(n.typ, p).Interface().(protoMarshaler)
		size := m.Size()
		dst = binary.AppendUvarint(appendKey(dst, num, wire.Bytes), uint64(size))
		dst = append(dst, make([]byte, size)...)
		if _, err := m.MarshalToSizedBuffer(dst[len(dst)-size:]); err != nil && *errp == nil {
			*errp = fmt.Errorf("project: encode %v: %w", n.typ, err)
		}
		return dst
	}
	return dst
}

// protoMarshaler is implemented by the generated Kubernetes API types.
type protoMarshaler interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// Digest names what the plan reads and into which Go types: two plans
// with the same digest encode and decode alike. A checkpoint names its
// encoding with it, so that a file written by a view type read back by a
// changed one (a field added, say, which the file does not hold) is
// refused rather than served with that field empty.
func (p *Plan) Digest() string {
	h := sha256.New()
	fmt.Fprintf(h, "%v %v\n", p.view, p.proto)
	digestMsg(h, p.root, 0)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func digestMsg(w io.Writer, m *msg, depth int) {
	names := make([]string, 0, len(m.byName))
	for name := range m.byName {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, a := range m.byName[name] {
			fmt.Fprintf(w, "%d %s off=%d keyed=%v key=%q\n", depth, name, a.off, a.keyed, a.key)
			if a.sub != nil {
				digestMsg(w, a.sub, depth+1)
				continue
			}
			digestNode(w, a.node, depth+1)
		}
	}
	for num, as := range m.byNum {
		if len(as) > 0 {
			fmt.Fprintf(w, "%d #%d %d\n", depth, num, len(as))
		}
	}
	bigs := make([]uint64, 0, len(m.bigNum))
	for num := range m.bigNum {
		bigs = append(bigs, num)
	}
	slices.Sort(bigs)
	for _, num := range bigs {
		fmt.Fprintf(w, "%d #%d %d\n", depth, num, len(m.bigNum[num]))
	}
}

func digestNode(w io.Writer, n *node, depth int) {
	fmt.Fprintf(w, "%d op=%d %v size=%d intern=%v micro=%v\n", depth, n.op, n.typ, n.size, n.intern, n.micro)
	if n.elem != nil {
		digestNode(w, n.elem, depth+1)
	}
	if n.msg != nil {
		digestMsg(w, n.msg, depth+1)
	}
}

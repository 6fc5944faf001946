package project

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"
	"unsafe"

	"github.com/kinformer/kinformer/internal/wire"
	"k8s.io/apimachinery/pkg/api/resource"
)

// DecodeProto decodes raw, the protobuf encoding of one full object (the
// bytes inside its runtime.Unknown envelope), into dst, a *V as New
// returns. Fields the view does not read are skipped without allocating.
// Strings go through strs unless it is nil. An error wraps ErrMalformed
// (dst is then partly written).
func (p *Plan) DecodeProto(raw []byte, dst any, strs *Strings) error {
	if !p.proto {
		return errors.New("project: plan compiled for JSON only")
	}
	ptr, err := p.ptrOf(dst)
	if err != nil {
		return err
	}
	d := decoder{strs: strs}
	if strs != nil {
		strs.mu.Lock()
		defer strs.mu.Unlock()
	}
	if err := d.message(p.root, raw, ptr); err != nil {
		if !errors.Is(err, ErrMalformed) { // a framing error of wire.Next
			err = fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		return err
	}
	return nil
}

// decoder holds what one decode needs besides the plan.
type decoder struct {
	strs *Strings // nil: no interning; locked by the caller
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// message decodes the fields of b that m reads into the view at base.
func (d *decoder) message(m *msg, b []byte, base unsafe.Pointer) error {
	for len(b) > 0 {
		f, rest, err := wire.Next(b)
		if err != nil {
			return err
		}
		b = rest
		for _, a := range m.forNum(f.Num) {
			if a.sub != nil {
				if f.Type != wire.Bytes {
					return malformed("field %d: wire type %d for a message", f.Num, f.Type)
				}
				if err := d.message(a.sub, f.Bytes, base); err != nil {
					return err
				}
				continue
			}
			if a.keyed {
				if err := d.keyed(a, base, f); err != nil {
					return err
				}
				continue
			}
			if err := d.value(a.node, add(base, a.off), f, rest); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyed decodes the value of map entry f into the view when its key is
// the one a reads.
func (d *decoder) keyed(a action, base unsafe.Pointer, f wire.Field) error {
	if f.Type != wire.Bytes {
		return malformed("field %d: wire type %d for a map entry", f.Num, f.Type)
	}
	k, v, hasVal, err := entry(f.Bytes)
	if err != nil || string(k) != a.key || !hasVal {
		return err
	}
	return d.value(a.node, add(base, a.off), v, nil)
}

// value decodes field f into p, of node n's type. rest is the remainder
// of the message after f, where a repeated field's other elements are.
func (d *decoder) value(n *node, p unsafe.Pointer, f wire.Field, rest []byte) error {
	switch n.op {
	case opPtr:
		return d.value(n.elem, d.alloc(n, p), f, rest)
	case opSlice:
		if f.Type == wire.Bytes && isScalar(n.elem.op) {
			return d.packed(n, p, f)
		}
		e := d.appendElem(n, p, 1+wire.Count(rest, f.Num))
		return d.value(n.elem, e, f, nil)
	case opInt, opUint, opBool:
		if f.Type != wire.Varint {
			return malformed("field %d: wire type %d for an integer", f.Num, f.Type)
		}
		setInt(n, p, f.V)
		return nil
	case opFloat:
		switch {
		case f.Type == wire.Fixed64 && n.size == 8:
			*(*float64)(p) = math.Float64frombits(f.V)
		case f.Type == wire.Fixed64:
			*(*float32)(p) = float32(math.Float64frombits(f.V))
		case f.Type == wire.Fixed32 && n.size == 8:
			*(*float64)(p) = float64(math.Float32frombits(uint32(f.V)))
		case f.Type == wire.Fixed32:
			*(*float32)(p) = math.Float32frombits(uint32(f.V))
		default:
			return malformed("field %d: wire type %d for a float", f.Num, f.Type)
		}
		return nil
	}
	if f.Type != wire.Bytes {
		return malformed("field %d: wire type %d for a length-delimited value", f.Num, f.Type)
	}
	switch n.op {
	case opString:
		*(*string)(p) = d.str(f.Bytes, n.intern)
	case opStruct:
		return d.message(n.msg, f.Bytes, p)
	case opTime:
		return d.timestamp(n, p, f.Bytes)
	case opQuantity:
		return d.quantity(p, f.Bytes)
	case opStringMap:
		return d.stringMapEntry(n, p, f, rest)
	case opPairs:
		return d.pairsEntry(p, f, rest)
	case opMap:
		return d.mapEntry(n, p, f, rest)
	case opMessage:
		if err := n.unmarshal(p, f.Bytes); err != nil {
			return fmt.Errorf("%w: %v: %w", ErrMalformed, n.typ, err)
		}
	}
	return nil
}

func isScalar(o op) bool { return o == opInt || o == opUint || o == opBool || o == opFloat }

// setInt stores an integer or bool of n's size at p.
func setInt(n *node, p unsafe.Pointer, v uint64) {
	if n.op == opBool {
		*(*bool)(p) = v != 0
		return
	}
	switch n.size {
	case 1:
		*(*uint8)(p) = uint8(v)
	case 2:
		*(*uint16)(p) = uint16(v)
	case 4:
		*(*uint32)(p) = uint32(v)
	default:
		*(*uint64)(p) = v
	}
}

// packed decodes a packed repeated scalar into the slice at p.
func (d *decoder) packed(n *node, p unsafe.Pointer, f wire.Field) error {
	b := f.Bytes
	items := 0
	switch n.elem.op {
	case opFloat:
		items = len(b) / 8
	default:
		for c := b; len(c) > 0; items++ {
			_, k := wire.Uvarint(c)
			if k <= 0 {
				return malformed("field %d: bad packed varint", f.Num)
			}
			c = c[k:]
		}
	}
	for i := 0; i < items; i++ {
		e := d.appendElem(n, p, items-i)
		if n.elem.op == opFloat {
			if len(b) < 8 {
				return malformed("field %d: truncated packed double", f.Num)
			}
			if err := d.value(n.elem, e, wire.Field{Num: f.Num, Type: wire.Fixed64, V: binary.LittleEndian.Uint64(b)}, nil); err != nil {
				return err
			}
			b = b[8:]
			continue
		}
		v, k := wire.Uvarint(b)
		b = b[k:]
		setInt(n.elem, e, v)
	}
	return nil
}

// sliceHeader is the runtime layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// appendElem makes room for one element at the end of the slice at p and
// returns its address. When the slice is full it grows to hold want more
// elements, so a counted repeated field is allocated once.
func (d *decoder) appendElem(n *node, p unsafe.Pointer, want int) unsafe.Pointer {
	h := (*sliceHeader)(p)
	if h.len == h.cap {
		if want < 1 {
			want = 1
		}
		old := reflect.NewAt(n.typ, p).Elem()
		grown := reflect.MakeSlice(n.typ, h.len, h.len+want)
		reflect.Copy(grown, old)
		old.Set(grown)
	}
	e := add(h.data, uintptr(h.len)*n.size)
	h.len++
	return e
}

// alloc returns the value the pointer at p points at, allocating it.
func (d *decoder) alloc(n *node, p unsafe.Pointer) unsafe.Pointer {
	pp := (*unsafe.Pointer)(p)
	if *pp == nil {
		*pp = reflect.New(n.elem.typ).UnsafePointer()
	}
	return *pp
}

func (d *decoder) str(b []byte, intern bool) string {
	if len(b) == 0 {
		return ""
	}
	if intern && d.strs != nil {
		return d.strs.getLocked(b)
	}
	return string(b)
}

// timestamp decodes a metav1.Time (seconds) or MicroTime (seconds and
// nanoseconds), in local time as their generated code does.
func (d *decoder) timestamp(n *node, p unsafe.Pointer, b []byte) error {
	if len(b) == 0 {
		*(*time.Time)(p) = time.Time{}
		return nil
	}
	var sec, nsec int64
	for len(b) > 0 {
		f, rest, err := wire.Next(b)
		if err != nil {
			return err
		}
		b = rest
		if f.Type != wire.Varint {
			continue
		}
		switch f.Num {
		case 1:
			sec = int64(f.V)
		case 2:
			nsec = int64(int32(f.V))
		}
	}
	if !n.micro {
		nsec = 0
	}
	*(*time.Time)(p) = time.Unix(sec, nsec).Local()
	return nil
}

// quantity decodes a resource.Quantity (its string, field 1).
func (d *decoder) quantity(p unsafe.Pointer, b []byte) error {
	for len(b) > 0 {
		f, rest, err := wire.Next(b)
		if err != nil {
			return err
		}
		b = rest
		if f.Num != 1 || f.Type != wire.Bytes {
			continue
		}
		q, err := resource.ParseQuantity(string(f.Bytes))
		if err != nil {
			return fmt.Errorf("%w: quantity: %w", ErrMalformed, err)
		}
		*(*resource.Quantity)(p) = q
	}
	return nil
}

// entry reads a map entry's key (field 1) and value field (field 2).
func entry(b []byte) (key []byte, val wire.Field, hasVal bool, err error) {
	for len(b) > 0 {
		f, rest, err := wire.Next(b)
		if err != nil {
			return nil, wire.Field{}, false, err
		}
		b = rest
		switch f.Num {
		case 1:
			if f.Type != wire.Bytes {
				return nil, wire.Field{}, false, malformed("map key of wire type %d", f.Type)
			}
			key = f.Bytes
		case 2:
			val, hasVal = f, true
		}
	}
	return key, val, hasVal, nil
}

// stringMapEntry adds one entry to the map[string]string at p, making the
// map, sized for every entry of the message, on the first.
func (d *decoder) stringMapEntry(n *node, p unsafe.Pointer, f wire.Field, rest []byte) error {
	k, v, _, err := entry(f.Bytes)
	if err != nil {
		return err
	}
	if v.Type != wire.Bytes && v.Num != 0 {
		return malformed("map value of wire type %d", v.Type)
	}
	m := (*map[string]string)(p)
	if *m == nil {
		*m = make(map[string]string, 1+wire.Count(rest, f.Num))
	}
	(*m)[d.str(k, true)] = d.str(v.Bytes, true)
	return nil
}

// mapEntry adds one entry to a map of any other value type, through
// reflect.
func (d *decoder) mapEntry(n *node, p unsafe.Pointer, f wire.Field, rest []byte) error {
	k, v, hasVal, err := entry(f.Bytes)
	if err != nil {
		return err
	}
	m := reflect.NewAt(n.typ, p).Elem()
	if m.IsNil() {
		m.Set(reflect.MakeMapWithSize(n.typ, 1+wire.Count(rest, f.Num)))
	}
	key := reflect.New(n.typ.Key()).Elem()
	key.SetString(d.str(k, true))
	val := reflect.New(n.typ.Elem())
	if hasVal {
		if err := d.value(n.elem, val.UnsafePointer(), v, nil); err != nil {
			return err
		}
	}
	m.SetMapIndex(key, val.Elem())
	return nil
}

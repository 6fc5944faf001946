package project

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/json"
)

// DecodeJSON decodes data, the JSON encoding of one full object, into
// dst, a *V as New returns, and returns the object's apiVersion and kind
// (aliasing data). Members the view does not read are skipped without
// allocating. Strings go through strs unless it is nil. An error wraps
// ErrMalformed (dst is then partly written).
func (p *Plan) DecodeJSON(data []byte, dst any, strs *Strings) (apiVersion, kind []byte, err error) {
	ptr, err := p.ptrOf(dst)
	if err != nil {
		return nil, nil, err
	}
	d := jdecoder{decoder: decoder{strs: strs}, data: data}
	if strs != nil {
		strs.mu.Lock()
		defer strs.mu.Unlock()
	}
	i := skipWS(data, 0)
	end, err := d.object(p.root, i, ptr, true)
	if err != nil {
		return nil, nil, err
	}
	if skipWS(data, end) != len(data) {
		return nil, nil, jsonErr(data, end, "data after the object")
	}
	return d.apiVersion, d.kind, nil
}

// jdecoder is one JSON decode: the input, and the object's type.
type jdecoder struct {
	decoder
	data             []byte
	apiVersion, kind []byte
	scratch          []byte // unescaped strings
}

// object decodes the object at data[i] into the view at base; root
// objects also yield apiVersion and kind.
func (d *jdecoder) object(m *msg, i int, base unsafe.Pointer, root bool) (int, error) {
	if end, ok := d.null(i); ok {
		return end, nil
	}
	return members(d.data, i, func(key []byte, esc bool, v int) (int, error) {
		if esc {
			var err error
			if d.scratch, err = unescape(d.scratch[:0], key); err != nil {
				return 0, err
			}
			key = d.scratch
		}
		if root && (string(key) == "apiVersion" || string(key) == "kind") && d.data[v] == '"' {
			s, _, end, err := scanString(d.data, v)
			if string(key) == "kind" {
				d.kind = s
			} else {
				d.apiVersion = s
			}
			return end, err
		}
		acts := m.byName[string(key)]
		if len(acts) == 0 {
			return skipValue(d.data, v)
		}
		end := 0
		for _, a := range acts {
			var err error
			switch {
			case a.sub != nil:
				end, err = d.object(a.sub, v, base, false)
			case a.keyed:
				end, err = d.keyed(a, v, base)
			default:
				end, err = d.value(a.node, add(base, a.off), v)
			}
			if err != nil {
				return 0, err
			}
		}
		return end, nil
	})
}

// keyed decodes the member a.key of the object at data[i] into the view.
func (d *jdecoder) keyed(a action, i int, base unsafe.Pointer) (int, error) {
	if end, ok := d.null(i); ok {
		return end, nil
	}
	return members(d.data, i, func(key []byte, esc bool, v int) (int, error) {
		if esc {
			var err error
			if key, err = unescape(nil, key); err != nil {
				return 0, err
			}
		}
		if string(key) != a.key {
			return skipValue(d.data, v)
		}
		return d.value(a.node, add(base, a.off), v)
	})
}

// null reports whether data[i] is null, and its end.
func (d *jdecoder) null(i int) (int, bool) {
	if i < len(d.data) && d.data[i] == 'n' {
		end, err := literal(d.data, i, "null")
		return end, err == nil
	}
	return 0, false
}

// text reads the string at data[i], unescaped into scratch if needed.
func (d *jdecoder) text(i int) ([]byte, int, error) {
	s, esc, end, err := scanString(d.data, i)
	if err != nil || !esc {
		return s, end, err
	}
	d.scratch, err = unescape(d.scratch[:0], s)
	return d.scratch, end, err
}

// value decodes the value at data[i] into p, of node n's type, and
// returns its end. null leaves p as it is.
func (d *jdecoder) value(n *node, p unsafe.Pointer, i int) (int, error) {
	if end, ok := d.null(i); ok {
		return end, nil
	}
	switch n.op {
	case opPtr:
		return d.value(n.elem, d.alloc(n, p), i)
	case opString:
		s, end, err := d.text(i)
		if err == nil {
			*(*string)(p) = d.str(s, n.intern)
		}
		return end, err
	case opBool:
		if d.data[i] == 't' {
			*(*bool)(p) = true
			return literal(d.data, i, "true")
		}
		return literal(d.data, i, "false")
	case opInt, opUint:
		return d.integer(n, p, i)
	case opFloat:
		end, err := scanNumber(d.data, i)
		if err != nil {
			return 0, err
		}
		f, err := strconv.ParseFloat(string(d.data[i:end]), 64)
		if err != nil {
			return 0, jsonErr(d.data, i, err.Error())
		}
		if n.size == 4 {
			*(*float32)(p) = float32(f)
		} else {
			*(*float64)(p) = f
		}
		return end, nil
	case opTime:
		s, end, err := d.text(i)
		if err != nil || len(s) == 0 {
			return end, err
		}
		t, err := time.Parse(time.RFC3339, string(s))
		if err != nil {
			return 0, jsonErr(d.data, i, err.Error())
		}
		*(*time.Time)(p) = t.Local()
		return end, nil
	case opQuantity:
		var s []byte
		end, err := 0, error(nil)
		if d.data[i] == '"' {
			s, end, err = d.text(i)
		} else {
			end, err = scanNumber(d.data, i)
			s = d.data[i:end]
		}
		if err != nil {
			return 0, err
		}
		q, err := resource.ParseQuantity(strings.TrimSpace(string(s)))
		if err != nil {
			return 0, jsonErr(d.data, i, err.Error())
		}
		*(*resource.Quantity)(p) = q
		return end, nil
	case opStruct:
		return d.object(n.msg, i, p, false)
	case opSlice:
		if d.data[i] != '[' {
			return 0, jsonErr(d.data, i, "want an array")
		}
		left := countItems(d.data, i)
		return elements(d.data, i, func(v int) (int, error) {
			e := d.appendElem(n, p, left)
			left--
			return d.value(n.elem, e, v)
		})
	case opStringMap:
		return d.stringMap(n, p, i)
	case opPairs:
		return d.pairs(p, i)
	case opMap:
		return d.anyMap(n, p, i)
	case opMessage:
		end, err := skipValue(d.data, i)
		if err != nil {
			return 0, err
		}
		if err := json.UnmarshalCaseSensitivePreserveInts(d.data[i:end], reflect.NewAt(n.typ, p).Interface()); err != nil {
			return 0, fmt.Errorf("%w: %v: %w", ErrMalformed, n.typ, err)
		}
		return end, nil
	}
	return 0, jsonErr(d.data, i, "unsupported value")
}

// integer decodes an integer of n's kind and size.
func (d *jdecoder) integer(n *node, p unsafe.Pointer, i int) (int, error) {
	end, err := scanNumber(d.data, i)
	if err != nil {
		return 0, err
	}
	tok := d.data[i:end]
	var v uint64
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	for _, c := range tok {
		if c < '0' || c > '9' || v > (math.MaxUint64-9)/10 {
			// a fraction, an exponent, or too large: through float
			f, err := strconv.ParseFloat(string(d.data[i:end]), 64)
			if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
				return 0, jsonErr(d.data, i, "not an integer")
			}
			neg, v = f < 0, uint64(math.Abs(f))
			break
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		if n.op == opUint {
			return 0, jsonErr(d.data, i, "negative value for an unsigned integer")
		}
		v = -v
	}
	setInt(n, p, v)
	return end, nil
}

// stringMap decodes an object of strings into the map at p, made at the
// object's size.
func (d *jdecoder) stringMap(n *node, p unsafe.Pointer, i int) (int, error) {
	if d.data[i] != '{' {
		return 0, jsonErr(d.data, i, "want an object")
	}
	m := (*map[string]string)(p)
	if *m == nil {
		*m = make(map[string]string, countItems(d.data, i))
	}
	return d.stringMembers(i, func(k, v string) { (*m)[k] = v })
}

// pairs decodes an object of strings into the pairs at p, made at the
// object's size.
func (d *jdecoder) pairs(p unsafe.Pointer, i int) (int, error) {
	if d.data[i] != '{' {
		return 0, jsonErr(d.data, i, "want an object")
	}
	kv := (*[]string)(p)
	if *kv == nil {
		*kv = make([]string, 0, 2*countItems(d.data, i))
	}
	return d.stringMembers(i, func(k, v string) { *kv = insertPair(*kv, k, v) })
}

// stringMembers calls set with each member of the object of strings at
// i (null values as ""), its key and value interned.
func (d *jdecoder) stringMembers(i int, set func(k, v string)) (int, error) {
	return members(d.data, i, func(key []byte, esc bool, v int) (int, error) {
		var k string
		if esc {
			s, err := unescape(nil, key)
			if err != nil {
				return 0, err
			}
			k = d.str(s, true)
		} else {
			k = d.str(key, true)
		}
		if end, ok := d.null(v); ok {
			set(k, "")
			return end, nil
		}
		s, end, err := d.text(v)
		if err != nil {
			return 0, err
		}
		set(k, d.str(s, true))
		return end, nil
	})
}

// anyMap decodes an object into a map of another value type, through
// reflect.
func (d *jdecoder) anyMap(n *node, p unsafe.Pointer, i int) (int, error) {
	if d.data[i] != '{' {
		return 0, jsonErr(d.data, i, "want an object")
	}
	m := reflect.NewAt(n.typ, p).Elem()
	if m.IsNil() {
		m.Set(reflect.MakeMapWithSize(n.typ, countItems(d.data, i)))
	}
	return members(d.data, i, func(key []byte, esc bool, v int) (int, error) {
		if esc {
			var err error
			if key, err = unescape(nil, key); err != nil {
				return 0, err
			}
		}
		k := reflect.New(n.typ.Key()).Elem()
		k.SetString(d.str(key, true))
		val := reflect.New(n.typ.Elem())
		end, err := d.value(n.elem, val.UnsafePointer(), v)
		if err != nil {
			return 0, err
		}
		m.SetMapIndex(k, val.Elem())
		return end, nil
	})
}

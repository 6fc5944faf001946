package project

import (
	"errors"
	"reflect"
	"unsafe"
)

// ErrMalformed is wrapped by every decoding error: bytes that are not the
// protobuf or JSON encoding of the full type.
var ErrMalformed = errors.New("malformed input")

// op is how one value is written into a view.
type op uint8

const (
	opString    op = iota // any string kind
	opInt                 // a signed integer of node.size bytes
	opUint                // an unsigned integer of node.size bytes
	opBool                // a bool
	opFloat               // a float of node.size bytes
	opTime                // time.Time, metav1.Time or metav1.MicroTime (one layout)
	opQuantity            // resource.Quantity
	opStruct              // a view struct: node.msg, based at the value
	opPtr                 // a pointer to node.elem, allocated when first set
	opSlice               // a slice of node.elem
	opStringMap           // a map whose keys and values are strings
	opMap                 // any other map from strings, through reflect
	opPairs               // a map of strings into a pairs type (pairs.go)
	opMessage             // the full type itself: its generated Unmarshal or encoding/json
)

// node says how to decode one value into memory of type typ.
type node struct {
	op   op
	typ  reflect.Type
	size uintptr // opInt, opUint, opFloat: bytes; opSlice: element size
	elem *node   // opPtr, opSlice, opMap: the element or value
	msg  *msg    // opStruct
	// intern: strings of this value go through the source's string
	// table (off for values unique per object: name, uid, version).
	intern bool
	// micro: an opTime read from a MicroTime, which keeps nanoseconds
	// (metav1.Time keeps whole seconds, on both wires).
	micro     bool
	unmarshal func(p unsafe.Pointer, data []byte) error // opMessage, protobuf
}

// action is what one field of a message does: decode its value into the
// view at off (node), or descend into it as a message whose fields write
// into the same view (sub), for paths of several segments, or pick one
// entry of a map (keyed).
type action struct {
	off  uintptr
	node *node
	sub  *msg
	// keyed: the field is a map, and node reads the value of its entry
	// key (a path such as resources.requests.cpu).
	keyed bool
	key   string
}

// msg is the plan of one message of the full type: the actions of the
// fields the view reads, by protobuf field number and by JSON name.
// Fields not in it are skipped.
type msg struct {
	byNum  [][]action // indexed by field number, for numbers < len
	bigNum map[uint64][]action
	byName map[string][]action
}

func newMsg() *msg { return &msg{byName: make(map[string][]action)} }

func (m *msg) forNum(num uint64) []action {
	if num < uint64(len(m.byNum)) {
		return m.byNum[num]
	}
	return m.bigNum[num]
}

// add registers a under the field's number (0: JSON only) and name.
func (m *msg) add(num uint64, name string, a action) {
	m.byName[name] = append(m.byName[name], a)
	if num == 0 {
		return
	}
	if num < 256 {
		for uint64(len(m.byNum)) <= num {
			m.byNum = append(m.byNum, nil)
		}
		m.byNum[num] = append(m.byNum[num], a)
		return
	}
	if m.bigNum == nil {
		m.bigNum = make(map[uint64][]action)
	}
	m.bigNum[num] = append(m.bigNum[num], a)
}

// sub returns the message the field descends into, creating it.
func (m *msg) subFor(num uint64, name string) *msg {
	for _, a := range m.byName[name] {
		if a.sub != nil {
			return a.sub
		}
	}
	s := newMsg()
	m.add(num, name, action{sub: s})
	return s
}

// Plan decodes the protobuf or JSON encoding of a full object straight
// into a view struct. It is immutable and safe for concurrent use.
type Plan struct {
	view    reflect.Type // the view struct
	viewPtr reflect.Type // a pointer to it: what New returns and Decode takes
	root    *msg
	proto   bool // compiled with protobuf field numbers
}

// New returns a pointer to a new zero view, as an any holding *V.
func (p *Plan) New() any { return reflect.New(p.view).Interface() }

// Type returns the view struct type.
func (p *Plan) Type() reflect.Type { return p.view }

// ptrOf returns the address dst (a *V in an interface) points at.
func (p *Plan) ptrOf(dst any) (unsafe.Pointer, error) {
	if reflect.TypeOf(dst) != p.viewPtr {
		return nil, errors.New("project: destination is not a " + p.viewPtr.String())
	}
	ptr := (*[2]unsafe.Pointer)(unsafe.Pointer(&dst))[1]
	if ptr == nil {
		return nil, errors.New("project: nil destination")
	}
	return ptr, nil
}

func add(p unsafe.Pointer, off uintptr) unsafe.Pointer { return unsafe.Add(p, off) }

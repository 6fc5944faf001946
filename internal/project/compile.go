package project

import (
	"fmt"
	"github.com/kinformer/kinformer/internal/wire"
	"reflect"
	"strings"
	"unsafe"
)

// Tag is the struct tag naming the path a view field is read from.
const Tag = "kube"

// maxDepth bounds the nesting of view structs (a recursive view type
// would otherwise never finish compiling).
const maxDepth = 32

// noIntern lists the paths whose strings are unique per object: interning
// them would only fill the string table.
var noIntern = map[string]bool{
	"metadata.name":            true,
	"metadata.uid":             true,
	"metadata.resourceVersion": true,
	"metadata.selfLink":        true,
}

// FieldError is a view field that cannot be read from the full type: a
// path that does not exist, or a Go type that cannot hold what is there.
type FieldError struct {
	View   reflect.Type // the view struct
	Field  string       // the Go field, dotted through nested view structs
	Path   string       // its path in the full type (absolute)
	Full   string       // the full type
	Reason string
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("view %v of %s: field %s: %s", e.View, e.Full, e.Field, e.Reason)
	}
	return fmt.Sprintf("view %v of %s: field %s (path %q): %s", e.View, e.Full, e.Field, e.Path, e.Reason)
}

// CompileGo compiles the plan that decodes full, a struct type of
// k8s.io/api (pointers allowed), into view (a struct, or a pointer to
// one). With proto the plan also decodes protobuf, and every path must
// have protobuf field numbers. An invalid view is a *FieldError.
func CompileGo(view, full reflect.Type, proto bool) (*Plan, error) {
	return compile(view, newGoShape(full), full.String(), proto)
}

// CompileSchema compiles a JSON-only plan for objects that s, a CRD's
// openAPIV3Schema, describes; metadata is read as metav1.ObjectMeta.
// name names the resource in errors.
func CompileSchema(view reflect.Type, s *Schema, name string) (*Plan, error) {
	return compile(view, schemaShape{s: s, root: true}, name, false)
}

func compile(view reflect.Type, full shape, fullName string, proto bool) (*Plan, error) {
	if view.Kind() == reflect.Pointer {
		view = view.Elem()
	}
	if view.Kind() != reflect.Struct {
		return nil, &FieldError{View: view, Full: fullName, Field: "(type)", Reason: "a view must be a struct"}
	}
	c := &compiler{view: view, fullName: fullName, proto: proto}
	root := newMsg()
	if err := c.structInto(view, full, root, 0, "", "", 0); err != nil {
		return nil, err
	}
	return &Plan{view: view, viewPtr: reflect.PointerTo(view), root: root, proto: proto}, nil
}

type compiler struct {
	view     reflect.Type
	fullName string
	proto    bool
}

// structInto adds the fields of view struct vt, read from full shape sh,
// to m, at offset base. goPath and absPath name where vt sits (for errors
// and interning).
func (c *compiler) structInto(vt reflect.Type, sh shape, m *msg, base uintptr, goPath, absPath string, depth int) error {
	if depth > maxDepth {
		return &FieldError{View: c.view, Full: c.fullName, Field: goPath, Path: absPath, Reason: "view nested too deep (a recursive view type?)"}
	}
	for i := 0; i < vt.NumField(); i++ {
		f := vt.Field(i)
		tag, tagged := f.Tag.Lookup(Tag)
		if tag == "-" {
			continue
		}
		field := joinPath(goPath, f.Name)
		fail := func(path, format string, args ...any) error {
			return &FieldError{View: c.view, Full: c.fullName, Field: field, Path: path, Reason: fmt.Sprintf(format, args...)}
		}
		if f.Anonymous && !tagged {
			switch {
			case f.Type.Kind() == reflect.Struct:
				if err := c.structInto(f.Type, sh, m, base+f.Offset, goPath, absPath, depth+1); err != nil {
					return err
				}
				continue
			case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
				return fail("", "an embedded pointer cannot be decoded into: embed the struct itself")
			}
		}
		if !f.IsExported() {
			continue
		}
		if !tagged {
			return fail("", `has no kube tag: give the path it is read from (kube:"spec.nodeName"), or kube:"-" to leave it alone`)
		}
		if tag == "" {
			return fail("", "empty kube tag")
		}
		cur, cs := m, sh
		segs := strings.Split(tag, ".")
		path := absPath
		for j, seg := range segs {
			parent := path
			path = joinPath(path, seg)
			if seg == "" {
				return fail(joinPath(absPath, tag), "empty segment in path")
			}
			if k := cs.kind(); k != kMessage && k != kAny {
				return fail(joinPath(absPath, tag), "%s is a %s (%s), which has no fields", orRoot(parent), k, cs)
			}
			fs, num, ok := cs.field(seg)
			if !ok {
				return fail(joinPath(absPath, tag), "%s (%s) has no field %q; it has %s", orRoot(parent), cs, seg, listNames(cs.names()))
			}
			if c.proto && num == 0 {
				return fail(joinPath(absPath, tag), "%s has no protobuf field number (apiVersion and kind are not object fields)", path)
			}
			if j == len(segs)-2 && fs.kind() == kMap {
				// The last segment is a key of this map: read its value.
				key := segs[j+1]
				n, err := c.node(f.Type, fs.elem(), path+"."+key, field, depth)
				if err != nil {
					return err
				}
				if n.op == opString {
					n.intern = true
				}
				cur.add(num, seg, action{off: base + f.Offset, node: n, key: key, keyed: true})
				break
			}
			if j < len(segs)-1 {
				cur, cs = cur.subFor(num, seg), fs
				continue
			}
			n, err := c.node(f.Type, fs, path, field, depth)
			if err != nil {
				return err
			}
			cur.add(num, seg, action{off: base + f.Offset, node: n})
		}
	}
	return nil
}

// node compiles how a value of full shape fs at path is decoded into Go
// type vt.
func (c *compiler) node(vt reflect.Type, fs shape, path, field string, depth int) (*node, error) {
	k := fs.kind()
	mismatch := func(why string) error {
		r := fmt.Sprintf("a %v cannot hold %s (%s)", vt, fs, k)
		if why != "" {
			r += ": " + why
		}
		return &FieldError{View: c.view, Full: c.fullName, Field: field, Path: path, Reason: r}
	}
	if gt := fs.goType(); gt != nil && gt == vt && vt.Kind() == reflect.Struct && k == kMessage {
		if m, ok := c.whole(vt, path, depth); ok {
			return &node{op: opStruct, typ: vt, msg: m}, nil
		}
		return c.message(vt, mismatch)
	}
	any := k == kAny
	switch vt {
	case timeType, metaTimeType, microTimeType:
		if k == kTime || any || (!c.proto && k == kString) {
			return &node{op: opTime, typ: vt, micro: fs.goType() == microTimeType}, nil
		}
		return nil, mismatch("")
	case quantityType:
		if k == kQuantity || any || (!c.proto && (k == kString || k == kInt || k == kFloat)) {
			return &node{op: opQuantity, typ: vt}, nil
		}
		return nil, mismatch("")
	}
	if isPairs(vt) {
		if k != kMap && !any {
			return nil, mismatch("")
		}
		e, err := c.node(reflect.TypeFor[string](), fs.elem(), path, field+"[]", depth+1)
		if err != nil {
			return nil, err
		}
		e.intern = true
		return &node{op: opPairs, typ: vt, elem: e}, nil
	}
	switch vt.Kind() {
	case reflect.Pointer:
		if vt.Elem().Kind() == reflect.Pointer {
			return nil, mismatch("pointers to pointers are not supported")
		}
		e, err := c.node(vt.Elem(), fs, path, field, depth)
		if err != nil {
			return nil, err
		}
		return &node{op: opPtr, typ: vt, elem: e}, nil
	case reflect.String:
		if k == kString || any {
			return &node{op: opString, typ: vt, intern: !noIntern[path]}, nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if k == kInt || k == kUint || any {
			if b := fs.bits(); b > vt.Bits() {
				return nil, mismatch(fmt.Sprintf("it has %d bits", b))
			}
			return &node{op: opInt, typ: vt, size: vt.Size()}, nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if k == kUint || any {
			if b := fs.bits(); b > vt.Bits() {
				return nil, mismatch(fmt.Sprintf("it has %d bits", b))
			}
			return &node{op: opUint, typ: vt, size: vt.Size()}, nil
		}
	case reflect.Bool:
		if k == kBool || any {
			return &node{op: opBool, typ: vt}, nil
		}
	case reflect.Float32, reflect.Float64:
		if k == kFloat || any || (!c.proto && k == kInt) {
			return &node{op: opFloat, typ: vt, size: vt.Size()}, nil
		}
	case reflect.Slice:
		if vt.Elem().Kind() == reflect.Uint8 {
			return nil, mismatch("byte slices are not supported")
		}
		if k == kList || any {
			e, err := c.node(vt.Elem(), fs.elem(), path, field+"[]", depth+1)
			if err != nil {
				return nil, err
			}
			return &node{op: opSlice, typ: vt, size: vt.Elem().Size(), elem: e}, nil
		}
	case reflect.Map:
		if vt.Key().Kind() != reflect.String {
			return nil, mismatch("map keys must be strings")
		}
		if k == kMap || any {
			e, err := c.node(vt.Elem(), fs.elem(), path, field+"[]", depth+1)
			if err != nil {
				return nil, err
			}
			if e.op == opString {
				e.intern = true
				return &node{op: opStringMap, typ: vt, elem: e}, nil
			}
			return &node{op: opMap, typ: vt, elem: e}, nil
		}
	case reflect.Struct:
		if k == kMessage || any {
			m := newMsg()
			if err := c.structInto(vt, fs, m, 0, field, path, depth+1); err != nil {
				return nil, err
			}
			return &node{op: opStruct, typ: vt, msg: m}, nil
		}
	default:
		return nil, mismatch("unsupported Go kind " + vt.Kind().String())
	}
	return nil, mismatch("")
}

// whole compiles a plan reading every field of vt, a type of the full
// object used as is in the view, when this package can decode all of
// them exactly as vt's generated code does (so its strings are interned
// and it costs fewer allocations); ok is false otherwise, and the
// generated code decodes it.
func (c *compiler) whole(vt reflect.Type, path string, depth int) (*msg, bool) {
	if depth > maxDepth {
		return nil, false
	}
	m := newMsg()
	for i := 0; i < vt.NumField(); i++ {
		f := vt.Field(i)
		name, inline := jsonName(f)
		num := wire.Number(f)
		if !f.IsExported() || inline || name == "" || (c.proto && num == 0) {
			return nil, false
		}
		n, err := c.node(f.Type, newGoShape(f.Type), joinPath(path, name), f.Name, depth+1)
		if err != nil || n.op == opMessage || n.op == opMap {
			return nil, false
		}
		m.add(num, name, action{off: f.Offset, node: n})
	}
	return m, true
}

// protoMessage is implemented by the generated Kubernetes API types.
type protoMessage interface{ Unmarshal([]byte) error }

// message is the node of a view field whose type is the full field's
// own: decoded by its generated code.
func (c *compiler) message(vt reflect.Type, mismatch func(string) error) (*node, error) {
	n := &node{op: opMessage, typ: vt}
	if reflect.PointerTo(vt).Implements(reflect.TypeFor[protoMessage]()) {
		n.unmarshal = func(p unsafe.Pointer, data []byte) error {
			return reflect.NewAt(vt, p).Interface().(protoMessage).Unmarshal(data)
		}
	} else if c.proto {
		return nil, mismatch("it has no generated protobuf Unmarshal")
	}
	return n, nil
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func orRoot(path string) string {
	if path == "" {
		return "the object"
	}
	return path
}

func listNames(names []string) string {
	const max = 30
	if len(names) == 0 {
		return "no fields"
	}
	if len(names) > max {
		return strings.Join(names[:max], ", ") + ", ..."
	}
	return strings.Join(names, ", ")
}

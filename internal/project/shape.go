package project

import (
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/kinformer/kinformer/internal/wire"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// shapeKind is what a field of the full type holds, as far as decoding
// is concerned.
type shapeKind uint8

const (
	kOther    shapeKind = iota // nothing a view can read (bytes, interfaces, ...)
	kMessage                   // an object: named fields
	kString                    // a string (any named string type)
	kInt                       // a signed integer
	kUint                      // an unsigned integer
	kBool                      // a bool
	kFloat                     // a float
	kList                      // a list of elem()
	kMap                       // a map from strings to elem()
	kTime                      // metav1.Time or MicroTime: a Timestamp on the wire, RFC 3339 in JSON
	kQuantity                  // resource.Quantity
	kAny                       // anything (a CRD's x-kubernetes-preserve-unknown-fields)
)

var kindNames = [...]string{
	kOther: "unsupported", kMessage: "object", kString: "string", kInt: "integer",
	kUint: "unsigned integer", kBool: "bool", kFloat: "float", kList: "list", kMap: "map",
	kTime: "time", kQuantity: "quantity", kAny: "anything",
}

func (k shapeKind) String() string { return kindNames[k] }

// shape describes a field of the full type a view is read from: a Go type
// of k8s.io/api (goShape) or a CRD's OpenAPI schema (schemaShape).
type shape interface {
	kind() shapeKind
	// field returns the member named name (its JSON name) of a kMessage
	// or kAny shape, with its protobuf field number (0: none).
	field(name string) (s shape, num uint64, ok bool)
	// elem is the element of a kList and the value of a kMap.
	elem() shape
	// bits is the width of a kInt or kUint (0: unknown).
	bits() int
	// goType is the Go type of the field (pointers removed), nil for a
	// schema.
	goType() reflect.Type
	// names lists the members of a kMessage, for error messages.
	names() []string
	String() string
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	metaTimeType  = reflect.TypeFor[metav1.Time]()
	microTimeType = reflect.TypeFor[metav1.MicroTime]()
	quantityType  = reflect.TypeFor[resource.Quantity]()
)

// goShape is a Go type of the full object, pointers removed.
type goShape struct{ t reflect.Type }

func newGoShape(t reflect.Type) goShape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return goShape{t}
}

func (g goShape) kind() shapeKind {
	switch g.t {
	case metaTimeType, microTimeType:
		return kTime
	case quantityType:
		return kQuantity
	}
	switch g.t.Kind() {
	case reflect.Struct:
		return kMessage
	case reflect.String:
		return kString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return kUint
	case reflect.Bool:
		return kBool
	case reflect.Float32, reflect.Float64:
		return kFloat
	case reflect.Slice:
		if g.t.Elem().Kind() == reflect.Uint8 {
			return kOther // []byte
		}
		return kList
	case reflect.Map:
		if g.t.Key().Kind() == reflect.String {
			return kMap
		}
	}
	return kOther
}

func (g goShape) bits() int {
	switch g.t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return g.t.Bits()
	}
	return 0
}

func (g goShape) elem() shape          { return newGoShape(g.t.Elem()) }
func (g goShape) goType() reflect.Type { return g.t }
func (g goShape) String() string       { return g.t.String() }

// field finds the struct field whose JSON name is name, looking into
// embedded structs tagged `json:",inline"`.
func (g goShape) field(name string) (shape, uint64, bool) {
	if g.t.Kind() != reflect.Struct {
		return nil, 0, false
	}
	for i := 0; i < g.t.NumField(); i++ {
		f := g.t.Field(i)
		if !f.IsExported() {
			continue
		}
		jn, inline := jsonName(f)
		if inline {
			if s, num, ok := newGoShape(f.Type).field(name); ok {
				return s, num, ok
			}
			continue
		}
		if jn == name {
			return newGoShape(f.Type), wire.Number(f), true
		}
	}
	return nil, 0, false
}

func (g goShape) names() []string {
	var out []string
	if g.t.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i < g.t.NumField(); i++ {
		f := g.t.Field(i)
		if !f.IsExported() {
			continue
		}
		jn, inline := jsonName(f)
		if inline {
			out = append(out, newGoShape(f.Type).names()...)
		} else if jn != "" {
			out = append(out, jn)
		}
	}
	sort.Strings(out)
	return out
}

// jsonName returns f's JSON name ("" for json:"-"), and whether f is an
// embedded struct whose fields are inlined.
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" && (strings.Contains(","+opts+",", ",inline,") || f.Anonymous) {
		return "", true
	}
	if name == "" {
		name = f.Name
	}
	return name, false
}

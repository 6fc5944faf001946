package source

import (
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/json"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/wire"
	"github.com/kinformer/kinformer/listwatch"
)

// Accept headers. The apiserver answers a list or watch in the first media
// type it supports.
const (
	acceptTyped        = "application/vnd.kubernetes.protobuf, application/json"
	acceptJSON         = "application/json"
	acceptMetadataList = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, " +
		"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json"
	acceptMetadataWatch = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, " +
		"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json"
)

// codec is what differs between the typed, dynamic and metadata sources: the
// Accept headers and how bytes become T. A codec is immutable and safe for
// concurrent use.
type codec[T cache.Object] struct {
	listAccept, watchAccept string
	// apiVersion and kind are what every protobuf object must carry (kind
	// "" accepts any kind); JSON objects are checked by jsonObject.
	apiVersion, kind string
	// list decodes a whole list body, protobuf (with its k8s prefix) or
	// JSON.
	list func(body []byte, proto bool) (listwatch.Page[T], error)
	// protoObject decodes an object's protobuf bytes, envelope removed;
	// nil when the source never receives protobuf.
	protoObject func(raw []byte) (T, error)
	// protoChanged, when set, decodes the object of a watch event other
	// than an add (modified, deleted, bookmark): protoObject without the
	// reuse of cached objects, since such an object is at a version no
	// cache holds yet.
	protoChanged func(raw []byte) (T, error)
	// jsonObject decodes one JSON object and checks its type.
	jsonObject func(data []byte) (T, error)
	// bookmarkEnd, when set, tells whether a bookmark's object (protobuf
	// without envelope, or JSON) carries the initial-events-end
	// annotation, for T that do not keep annotations (views); nil: T's
	// GetAnnotations says.
	bookmarkEnd func(raw []byte, proto bool) bool
}

// protoMessage is implemented by every generated Kubernetes API type.
type protoMessage interface {
	Unmarshal(data []byte) error
}

// structCodec builds the codec of a generated Go type described by b: the
// typed source's codec, and with lenient set (any JSON kind accepted, for
// servers that ignore the as= conversion) the metadata source's.
func structCodec[T cache.Object](b builtin, listAccept, watchAccept string, lenient bool) (*codec[T], error) {
	ptr := reflect.PointerTo(b.elem)
	if ptr != reflect.TypeFor[T]() {
		return nil, fmt.Errorf("kube: %v is not %v", reflect.TypeFor[T](), ptr)
	}
	protoOK := ptr.Implements(reflect.TypeFor[protoMessage]()) &&
		b.itemsTag != 0 && b.listMetaTag != 0
	c := &codec[T]{
		listAccept:  listAccept,
		watchAccept: watchAccept,
		apiVersion:  b.gvk.GroupVersion().String(),
		kind:        b.gvk.Kind,
	}
	if !protoOK {
		// Not a generated protobuf type: ask for JSON only.
		c.listAccept, c.watchAccept = acceptJSON, acceptJSON
	}
	gvk := b.gvk
	newObj := func() T {
		t := reflect.New(b.elem).Interface().(T)
		any(t).(runtime.Object).GetObjectKind().SetGroupVersionKind(gvk)
		return t
	}
	if protoOK {
		c.protoObject = func(raw []byte) (T, error) {
			t := newObj()
			if err := any(t).(protoMessage).Unmarshal(raw); err != nil {
				var zero T
				return zero, fmt.Errorf("%w: %v: %w", ErrMalformed, gvk.Kind, err)
			}
			return t, nil
		}
	}
	c.jsonObject = func(data []byte) (T, error) {
		var zero T
		t := reflect.New(b.elem).Interface().(T)
		if err := json.UnmarshalCaseSensitivePreserveInts(data, t); err != nil {
			return zero, fmt.Errorf("%w: %v: %w", ErrMalformed, gvk.Kind, err)
		}
		ok := any(t).(runtime.Object).GetObjectKind()
		if got := ok.GroupVersionKind(); !lenient && got != gvk {
			return zero, &listwatch.DecodeError{Got: describeGVK(got), Err: fmt.Errorf("want %v", describeGVK(gvk))}
		}
		ok.SetGroupVersionKind(gvk)
		return t, nil
	}
	c.list = func(body []byte, proto bool) (listwatch.Page[T], error) {
		if proto && protoOK {
			return decodeProtoList(b, body, c.protoObject)
		}
		if proto {
			return listwatch.Page[T]{}, fmt.Errorf("%w: protobuf list of %v, which has no protobuf form", ErrMalformed, gvk.Kind)
		}
		return decodeJSONList[T](b, body, lenient)
	}
	return c, nil
}

// decodeProtoList decodes a protobuf list body. Each item is decoded
// straight from the body into its own allocation: no intermediate list
// struct, no growth copies of the items slice, and no item keeps the others
// alive.
func decodeProtoList[T cache.Object](b builtin, body []byte, decode func([]byte) (T, error)) (listwatch.Page[T], error) {
	var page listwatch.Page[T]
	env, err := parseEnvelope(body)
	if err != nil {
		return page, err
	}
	if string(env.Kind) != b.gvk.Kind+"List" {
		return page, &listwatch.DecodeError{Got: string(env.APIVersion) + " " + string(env.Kind),
			Err: fmt.Errorf("want %sList", b.gvk.Kind)}
	}
	// First pass: count the items, to allocate the result once.
	n := 0
	f := wire.Fields{B: env.Raw}
	for {
		fld, ok, err := f.Next()
		if err != nil {
			return page, malformed(err)
		}
		if !ok {
			break
		}
		if fld.Num == b.itemsTag && fld.Type == wire.Bytes {
			n++
		}
	}
	page.Items = make([]T, 0, n)
	var lm metav1.ListMeta
	f = wire.Fields{B: env.Raw}
	for {
		fld, ok, _ := f.Next() // the first pass proved the framing
		if !ok {
			break
		}
		if fld.Type != wire.Bytes {
			continue
		}
		val := fld.Bytes
		switch fld.Num {
		case b.itemsTag:
			item, err := decode(val)
			if err != nil {
				return listwatch.Page[T]{}, err
			}
			page.Items = append(page.Items, item)
		case b.listMetaTag:
			if err := lm.Unmarshal(val); err != nil {
				return listwatch.Page[T]{}, fmt.Errorf("%w: list metadata: %w", ErrMalformed, err)
			}
		}
	}
	setListMeta(&page, &lm)
	return page, nil
}

// decodeJSONList decodes a JSON list body into b.list (see listOf) and
// returns pointers into its Items array (the JSON path is the fallback, so
// it keeps the simple form).
func decodeJSONList[T cache.Object](b builtin, body []byte, lenient bool) (listwatch.Page[T], error) {
	var page listwatch.Page[T]
	lp := reflect.New(b.list)
	if err := json.UnmarshalCaseSensitivePreserveInts(body, lp.Interface()); err != nil {
		return page, fmt.Errorf("%w: %sList: %w", ErrMalformed, b.gvk.Kind, err)
	}
	l := lp.Elem()
	lk := schema.FromAPIVersionAndKind(l.Field(0).String(), l.Field(1).String())
	want := b.gvk.GroupVersion().WithKind(b.gvk.Kind + "List")
	if !lenient && lk != want {
		return page, &listwatch.DecodeError{Got: describeGVK(lk), Err: fmt.Errorf("want %v", describeGVK(want))}
	}
	items := l.Field(b.items)
	page.Items = make([]T, items.Len())
	for i := range page.Items {
		t := items.Index(i).Addr().Interface().(T)
		any(t).(runtime.Object).GetObjectKind().SetGroupVersionKind(b.gvk)
		page.Items[i] = t
	}
	setListMeta(&page, l.Field(2).Addr().Interface().(*metav1.ListMeta))
	return page, nil
}

func setListMeta[T cache.Object](page *listwatch.Page[T], lm *metav1.ListMeta) {
	page.ResourceVersion = lm.ResourceVersion
	page.Continue = lm.Continue
	page.RemainingItemCount = lm.RemainingItemCount
}

func describeGVK(gvk schema.GroupVersionKind) string {
	if gvk.Empty() {
		return "an object without apiVersion and kind"
	}
	return gvk.GroupVersion().String() + " " + gvk.Kind
}

// metadataBuiltin describes PartialObjectMetadata the way resolveBuiltin
// describes a built-in type, so the metadata source shares the typed codec.
func metadataBuiltin() builtin {
	list := reflect.TypeFor[metav1.PartialObjectMetadataList]()
	items, _ := list.FieldByName("Items")
	lm, _ := list.FieldByName("ListMeta")
	return builtin{
		gvk:         metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata"),
		elem:        reflect.TypeFor[metav1.PartialObjectMetadata](),
		list:        listOf(reflect.TypeFor[metav1.PartialObjectMetadata]()),
		items:       listItems,
		itemsTag:    wire.Number(items),
		listMetaTag: wire.Number(lm),
	}
}

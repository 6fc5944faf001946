package source

import (
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/project"
	"github.com/kinformer/kinformer/internal/wire"
	"github.com/kinformer/kinformer/listwatch"
)

// viewCodec is the codec of a view source: plan decodes the full
// object's protobuf (when b has a protobuf list) or JSON straight into
// T. apiVersion must match every object; kind too unless "". b describes
// the full type of a typed view (its list kind and field numbers); it is
// the zero builtin for a dynamic view, which is JSON only. strs, unless
// nil, interns the views' strings.
func viewCodec[T cache.Object](plan *project.Plan, b builtin, apiVersion, kind string, proto bool, strs *project.Strings) *codec[T] {
	c := &codec[T]{
		listAccept: acceptJSON, watchAccept: acceptJSON,
		apiVersion: apiVersion, kind: kind,
		bookmarkEnd: bookmarkEnd,
	}
	what := kind
	if what == "" {
		what = apiVersion
	}
	if proto {
		c.listAccept, c.watchAccept = acceptTyped, acceptTyped
		c.protoObject = func(raw []byte) (T, error) {
			v := plan.New()
			if err := plan.DecodeProto(raw, v, strs); err != nil {
				var zero T
				return zero, fmt.Errorf("%w: %s into %v: %w", ErrMalformed, what, plan.Type(), err)
			}
			return v.(T), nil
		}
	}
	// item decodes a JSON object; check says whether its type is checked
	// (a list's items carry no apiVersion and kind for built-in types).
	item := func(data []byte, check bool) (T, error) {
		var zero T
		v := plan.New()
		av, k, err := plan.DecodeJSON(data, v, strs)
		if err != nil {
			return zero, fmt.Errorf("%w: %s into %v: %w", ErrMalformed, what, plan.Type(), err)
		}
		if check && (string(av) != apiVersion || (kind != "" && string(k) != kind)) {
			return zero, &listwatch.DecodeError{Got: string(av) + " " + string(k), Err: fmt.Errorf("want %s %s", apiVersion, kind)}
		}
		return v.(T), nil
	}
	c.jsonObject = func(data []byte) (T, error) { return item(data, true) }
	c.list = func(body []byte, isProto bool) (listwatch.Page[T], error) {
		if isProto && c.protoObject != nil {
			return decodeProtoList(b, body, c.protoObject)
		}
		if isProto {
			return listwatch.Page[T]{}, fmt.Errorf("%w: protobuf list for a JSON-only source", ErrMalformed)
		}
		return decodeJSONViewList(body, apiVersion, kind, func(data []byte) (T, error) { return item(data, false) })
	}
	return c
}

// decodeJSONViewList decodes a JSON list body, each item through item,
// without decoding the list as a whole.
func decodeJSONViewList[T cache.Object](body []byte, apiVersion, kind string, item func([]byte) (T, error)) (listwatch.Page[T], error) {
	var page listwatch.Page[T]
	var lm metav1.ListMeta
	var tm metav1.TypeMeta
	err := project.JSONMembers(body, func(key, value []byte) error {
		switch string(key) {
		case "apiVersion":
			return json.Unmarshal(value, &tm.APIVersion)
		case "kind":
			return json.Unmarshal(value, &tm.Kind)
		case "metadata":
			return json.Unmarshal(value, &lm)
		case "items":
			if string(value) == "null" { // an empty list, as apimachinery reads it
				return nil
			}
			n, err := project.JSONElements(value, nil)
			if err != nil {
				return err
			}
			page.Items = make([]T, 0, n)
			_, err = project.JSONElements(value, func(data []byte) error {
				t, err := item(data)
				page.Items = append(page.Items, t)
				return err
			})
			return err
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrMalformed) {
			return listwatch.Page[T]{}, err
		}
		return listwatch.Page[T]{}, fmt.Errorf("%w: list: %w", ErrMalformed, err)
	}
	if tm.APIVersion != apiVersion || (kind != "" && tm.Kind != kind+"List") {
		return listwatch.Page[T]{}, &listwatch.DecodeError{Got: tm.APIVersion + " " + tm.Kind, Err: fmt.Errorf("want %s %sList", apiVersion, kind)}
	}
	setListMeta(&page, &lm)
	return page, nil
}

// Field number of ObjectMeta's annotations.
const metaAnnotationsField = 12

// bookmarkEnd reports whether a bookmark's object carries the
// initial-events-end annotation, read off the wire: a view need not keep
// annotations for a streaming list to end.
func bookmarkEnd(raw []byte, proto bool) bool {
	if !proto {
		var o struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		return json.Unmarshal(raw, &o) == nil && o.Metadata.Annotations[initialEventsEnd] == "true"
	}
	f := wire.Fields{B: raw}
	for {
		fld, ok, err := f.Next()
		if err != nil || !ok {
			return false
		}
		if fld.Num != objectMetaField || fld.Type != wire.Bytes {
			continue
		}
		m := wire.Fields{B: fld.Bytes}
		for {
			mf, ok, err := m.Next()
			if err != nil || !ok {
				return false
			}
			if mf.Num != metaAnnotationsField || mf.Type != wire.Bytes {
				continue
			}
			var key, value []byte
			e := wire.Fields{B: mf.Bytes}
			for {
				ef, ok, err := e.Next()
				if err != nil || !ok {
					break
				}
				if ef.Type == wire.Bytes && ef.Num == 1 {
					key = ef.Bytes
				} else if ef.Type == wire.Bytes && ef.Num == 2 {
					value = ef.Bytes
				}
			}
			if string(key) == initialEventsEnd && string(value) == "true" {
				return true
			}
		}
	}
}

package kubetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/client-go/kubernetes/scheme"
)

// Encoding is apimachinery's: the serializers of client-go's scheme for
// JSON and protobuf (the k8s\x00 envelope around a runtime.Unknown), their
// stream framings for watches (newline-separated JSON, length-prefixed
// protobuf frames), and meta.AsPartialObjectMetadata for metadata-only
// answers. Nothing here writes bytes by hand.

const (
	mediaJSON  = runtime.ContentTypeJSON     // application/json
	mediaProto = runtime.ContentTypeProtobuf // application/vnd.kubernetes.protobuf
)

var (
	jsonInfo  = serializerInfo(mediaJSON)
	protoInfo = serializerInfo(mediaProto)
)

func serializerInfo(mediaType string) runtime.SerializerInfo {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
	if !ok || info.StreamSerializer == nil {
		panic("kubetest: client-go's scheme has no streaming serializer for " + mediaType)
	}
	return info
}

// format is how an answer is encoded: JSON or protobuf, whole objects or
// their metadata (PartialObjectMetadata, asked for with as=... in Accept).
type format struct {
	proto, meta bool
}

func (f format) info() runtime.SerializerInfo {
	if f.proto {
		return protoInfo
	}
	return jsonInfo
}

// contentType is the Content-Type of an answer in f; watch streams of
// protobuf say so, as the apiserver does.
func (f format) contentType(watch bool) string {
	switch {
	case f.proto && watch:
		return mediaProto + ";stream=watch"
	case f.proto:
		return mediaProto
	}
	return mediaJSON
}

// negotiate picks the first media type of accept the server can answer in,
// for one object (list false) or a list of res. It serves application/json
// (and */*) for every resource, application/vnd.kubernetes.protobuf for
// built-in ones, and either with as=PartialObjectMetadata (one object or a
// watch) or as=PartialObjectMetadataList (a list) of meta.k8s.io/v1 for any
// resource. Table and other conversions are not served: they are skipped,
// and when nothing is left the answer is 406 Not Acceptable.
func negotiate(accept string, res *resource, list bool) (format, error) {
	if strings.TrimSpace(accept) == "" {
		return format{}, nil
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		var f format
		switch mt {
		case mediaJSON, "*/*", "application/*":
		case mediaProto:
			f.proto = true
		default:
			continue
		}
		switch as := params["as"]; as {
		case "":
			if f.proto && !res.builtin {
				continue // custom resources have no protobuf encoding
			}
		case "PartialObjectMetadata", "PartialObjectMetadataList":
			if params["g"] != metav1.GroupName || params["v"] != "v1" || (as == "PartialObjectMetadataList") != list {
				continue
			}
			f.meta = true
		default:
			continue
		}
		return f, nil
	}
	return format{}, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
		Message: fmt.Sprintf("only the following media types are accepted: %s, %s, and either with as=PartialObjectMetadata;g=meta.k8s.io;v=v1 (got %q)", mediaJSON, mediaProto, accept),
	}}
}

// object returns what answers with e in f: its object, or its metadata.
func (f format) object(e *entry) runtime.Object {
	if !f.meta {
		return e.obj
	}
	m := meta.AsPartialObjectMetadata(e.m)
	m.TypeMeta = metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}
	return m
}

// list builds the list answering with items in f at the given list
// metadata. Items of built-in resources lose their apiVersion and kind, as
// in the apiserver's lists; custom resources' items keep them.
func (f format) list(res *resource, items []*entry, lm metav1.ListMeta) (runtime.Object, error) {
	if f.meta {
		l := &metav1.PartialObjectMetadataList{
			TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"},
			ListMeta: lm,
			Items:    make([]metav1.PartialObjectMetadata, len(items)),
		}
		for i, e := range items {
			l.Items[i] = *meta.AsPartialObjectMetadata(e.m)
			l.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"} // as the apiserver's
		}
		return l, nil
	}
	if !res.builtin {
		l := res.newList().(*unstructured.UnstructuredList)
		l.SetResourceVersion(lm.ResourceVersion)
		l.SetContinue(lm.Continue)
		l.SetRemainingItemCount(lm.RemainingItemCount)
		l.Items = make([]unstructured.Unstructured, len(items))
		for i, e := range items {
			l.Items[i] = *e.obj.(*unstructured.Unstructured)
		}
		return l, nil
	}
	l := res.newList()
	objs := make([]runtime.Object, len(items))
	for i, e := range items {
		e.obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{}) // items are the store's copies
		objs[i] = e.obj
	}
	if err := meta.SetList(l, objs); err != nil {
		return nil, err
	}
	la, err := meta.ListAccessor(l)
	if err != nil {
		return nil, err
	}
	la.SetResourceVersion(lm.ResourceVersion)
	la.SetContinue(lm.Continue)
	la.SetRemainingItemCount(lm.RemainingItemCount)
	return l, nil
}

// writeObject answers code with obj in f.
func writeObject(w http.ResponseWriter, code int, f format, obj runtime.Object) {
	var buf bytes.Buffer
	if err := f.info().Serializer.Encode(obj, &buf); err != nil {
		writeError(w, apierrors.NewInternalError(fmt.Errorf("encode %T: %w", obj, err)))
		return
	}
	w.Header().Set("Content-Type", f.contentType(false))
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// statusOf returns the Status err stands for: the Status of an
// *apierrors.StatusError, or 500 Internal Error.
func statusOf(err error) *metav1.Status {
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		se = apierrors.NewInternalError(err)
	}
	st := se.ErrStatus
	st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	return &st
}

// writeError answers with the Status err stands for, as JSON, as the
// apiserver answers clients that accept JSON.
func writeError(w http.ResponseWriter, err error) {
	st := statusOf(err)
	writeObject(w, int(st.Code), format{}, st)
}

// watchEncoder writes watch events in a format, each framed as the
// apiserver frames them.
type watchEncoder struct {
	f   format
	obj runtime.Encoder
	enc streaming.Encoder
	buf bytes.Buffer // the event's object, reused
}

func newWatchEncoder(w io.Writer, f format) *watchEncoder {
	info := f.info()
	return &watchEncoder{
		f:   f,
		obj: info.Serializer,
		enc: streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(w), info.StreamSerializer.Serializer),
	}
}

func (we *watchEncoder) encode(typ string, obj runtime.Object) error {
	we.buf.Reset()
	if err := we.obj.Encode(obj, &we.buf); err != nil {
		return err
	}
	return we.enc.Encode(&metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: we.buf.Bytes()}})
}

// decodeBody decodes the object a client sent for res: JSON, YAML or
// protobuf for a built-in resource, JSON for a custom one. Its apiVersion
// and kind, when present, must be res's.
func decodeBody(res *resource, contentType string, body []byte) (runtime.Object, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if res.builtin {
		switch mt {
		case mediaJSON, mediaProto, runtime.ContentTypeYAML, "":
		default:
			return nil, unsupportedMedia(mt, res)
		}
		obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, res.new())
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding %s: %v", res.gvk.Kind, err))
		}
		if gvk.GroupKind() != res.gvk.GroupKind() || gvk.Version != res.gvk.Version {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", gvk.GroupVersion(), res.gvk.GroupVersion()))
		}
		obj.GetObjectKind().SetGroupVersionKind(res.gvk)
		return obj, nil
	}
	if mt != mediaJSON && mt != "" {
		return nil, unsupportedMedia(mt, res)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(body); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding %s: %v", res.gvk.Kind, err))
	}
	if gvk := u.GroupVersionKind(); gvk != res.gvk {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version and kind in the data (%s) do not match the expected ones (%s)", gvk, res.gvk))
	}
	return u, nil
}

func unsupportedMedia(mt string, res *resource) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format for %s: %q", res.groupResource(), mt),
	}}
}

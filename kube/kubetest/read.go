package kubetest

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// get answers GET of one object (or of its status subresource, which is
// the whole object). The resourceVersion parameter is ignored: the answer
// is the current state.
func (s *Server) get(w http.ResponseWriter, r *http.Request, req apiRequest) {
	f, err := negotiate(r.Header.Get("Accept"), req.res, false)
	if err != nil {
		writeError(w, err)
		return
	}
	e, ok := s.store.Get(storeNamespace(req.res, req.namespace), req.name)
	if !ok {
		writeError(w, apierrors.NewNotFound(req.res.groupResource(), req.name))
		return
	}
	writeObject(w, http.StatusOK, f, f.object(e))
}

// list answers LIST: one page, at the resource version the parameters ask
// for (see listwatch/fake's Source.List for the rules, which are
// kube-apiserver's).
func (s *Server) list(w http.ResponseWriter, r *http.Request, req apiRequest) {
	opts, _, err := s.listOptions(r, req)
	if err != nil {
		writeError(w, err)
		return
	}
	f, err := negotiate(r.Header.Get("Accept"), req.res, true)
	if err != nil {
		writeError(w, err)
		return
	}
	page, err := s.store.List(r.Context(), opts)
	if err != nil {
		writeError(w, storeError(err, opts))
		return
	}
	obj, err := f.list(req.res, page.Items, metav1.ListMeta{
		ResourceVersion: page.ResourceVersion, Continue: page.Continue, RemainingItemCount: page.RemainingItemCount,
	})
	if err != nil {
		writeError(w, apierrors.NewInternalError(err))
		return
	}
	writeObject(w, http.StatusOK, f, obj)
}

// listOptions reads a list or watch request's parameters with
// kube-apiserver's own decoding and validation (422 Invalid for a
// combination it refuses; sendInitialEvents is refused too with
// Options.StreamingListUnsupported) and returns them as the store's
// options, the selectors replaced by their matcher's key.
func (s *Server) listOptions(r *http.Request, req apiRequest) (listwatch.Options, *metainternalversion.ListOptions, error) {
	var in metainternalversion.ListOptions
	q := r.URL.Query()
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, &in); err != nil {
		return listwatch.Options{}, nil, apierrors.NewBadRequest(err.Error())
	}
	in.Watch = req.verb == "watch"
	if errs := validation.ValidateListOptions(&in, !s.opts.StreamingListUnsupported); len(errs) > 0 {
		return listwatch.Options{}, nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	key, err := s.matchers.compile(req.res, req.namespace, q.Get("labelSelector"), q.Get("fieldSelector"))
	if err != nil {
		return listwatch.Options{}, nil, err
	}
	opts := listwatch.Options{
		ResourceVersion:      in.ResourceVersion,
		ResourceVersionMatch: listwatch.ResourceVersionMatch(in.ResourceVersionMatch),
		FieldSelector:        key,
		Limit:                in.Limit,
		Continue:             in.Continue,
		AllowBookmarks:       in.AllowWatchBookmarks,
		SendInitialEvents:    in.SendInitialEvents != nil && *in.SendInitialEvents,
	}
	if in.TimeoutSeconds != nil {
		opts.TimeoutSeconds = *in.TimeoutSeconds
	}
	return opts, &in, nil
}

// storeError is the Status answering a failed List or Watch of the store.
func storeError(err error, opts listwatch.Options) error {
	switch {
	case errors.Is(err, listwatch.ErrExpired) && opts.Continue != "":
		return apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. " +
			"You can start a new list without the continue parameter.")
	case errors.Is(err, listwatch.ErrExpired):
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %v", err))
	case errors.Is(err, listwatch.ErrTooLargeResourceVersion):
		// As kube-apiserver's storage.NewTooLargeResourceVersionError.
		se := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %v", err), 1)
		se.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
		return se
	case errors.Is(err, fake.ErrInvalid):
		return apierrors.NewBadRequest(err.Error())
	}
	return apierrors.NewInternalError(err)
}

// watch answers WATCH: a stream of events from the store, encoded as the
// Accept header asks, until the client goes, the timeout passes, or a
// fault ends it.
//
// A watch with sendInitialEvents=false and resourceVersion "" or "0"
// starts at the current version without initial events, as
// kube-apiserver's does.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, req apiRequest) {
	opts, in, err := s.listOptions(r, req)
	if err != nil {
		writeError(w, err)
		return
	}
	f, err := negotiate(r.Header.Get("Accept"), req.res, false)
	if err != nil {
		writeError(w, err)
		return
	}
	if in.SendInitialEvents != nil && !*in.SendInitialEvents && (opts.ResourceVersion == "" || opts.ResourceVersion == "0") {
		opts.ResourceVersion = s.store.ResourceVersion()
	}
	stream, err := s.store.Watch(r.Context(), opts)
	if err != nil {
		writeError(w, storeError(err, opts))
		return
	}
	defer stream.Close()
	w.Header().Set("Content-Type", f.contentType(true))
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	enc := newWatchEncoder(w, f)
	for {
		ev, err := stream.Next()
		switch {
		case errors.Is(err, io.EOF):
			return // a clean end: timeout, CloseWatches, the client gone
		case errors.Is(err, listwatch.ErrUnavailable):
			resetConnection(w) // ResetWatches
			return
		case err != nil:
			return
		}
		var obj runtime.Object
		switch ev.Type {
		case listwatch.Bookmark:
			if s.dropBookmarks.Load() && !ev.InitialEventsEnd {
				continue
			}
			obj = bookmark(req.res, f, ev.ResourceVersion, ev.InitialEventsEnd)
		case listwatch.Error:
			obj = statusOf(watchError(ev.Err))
		default:
			obj = f.object(ev.Object)
		}
		if enc.encode(string(ev.Type), obj) != nil || rc.Flush() != nil {
			return
		}
	}
}

// watchError is the Status of an Error event.
func watchError(err error) error {
	if errors.Is(err, listwatch.ErrExpired) {
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %v", err))
	}
	return apierrors.NewInternalError(err)
}

// bookmark is the object of a bookmark at version rv: an empty object of
// the watched kind (or empty metadata) carrying only the version, and the
// k8s.io/initial-events-end annotation on the bookmark ending a streaming
// list.
func bookmark(res *resource, f format, rv string, end bool) runtime.Object {
	var obj runtime.Object
	if f.meta {
		obj = &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}}
	} else {
		obj = res.new()
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err) // every served kind has metadata (servable)
	}
	m.SetResourceVersion(rv)
	if end {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return obj
}

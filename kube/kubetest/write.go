package kubetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kinformer/kinformer/listwatch/fake"
)

// Writes. Each takes Server.writeMu, so it reads, checks and replaces the
// stored object with no other write in between, and is one change of the
// store (one resource version, one watch event). What a write does, as
// kube-apiserver's generic registry does it:
//   - create sets uid, creationTimestamp and generation 1, and a name from
//     generateName; an object of that name already there is 409
//     AlreadyExists.
//   - update (PUT, or a patch applied to the stored object) keeps uid and
//     creationTimestamp, answers 409 Conflict when the object carries a
//     resourceVersion other than the stored one (none means
//     unconditional), bumps generation when anything but metadata and
//     status changed, and changes nothing at all (no new version, no
//     event) when nothing changed. Writes to the status subresource
//     change only status; writes to the object change status too (there
//     is no per-resource strategy to reset it).
//   - delete removes the object at once: finalizers and grace periods are
//     not waited for. Preconditions (uid, resourceVersion) are checked.

// Create stores a copy of obj, as a create through the API does, and
// updates obj in place with what was stored (name, uid, resourceVersion,
// creationTimestamp). obj's kind must be served: a Go type of client-go's
// scheme, or an *unstructured.Unstructured with apiVersion and kind set.
// Its resourceVersion is ignored. Errors are the API's
// (apierrors.IsAlreadyExists, ...).
func (s *Server) Create(obj runtime.Object) error {
	res, in, err := s.normalize(obj)
	if err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	e, err := s.createLocked(res, in.m.GetNamespace(), in)
	if err != nil {
		return err
	}
	return copyInto(obj, e.obj)
}

// Update replaces the stored object of obj's kind, namespace and name with
// a copy of obj, as an update (PUT) through the API does, and updates obj
// in place with what was stored. With obj's resourceVersion set, a stored
// object of another version is a 409 Conflict; empty, the update is
// unconditional.
func (s *Server) Update(obj runtime.Object) error {
	res, in, err := s.normalize(obj)
	if err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	e, err := s.updateLocked(res, in.m.GetNamespace(), in.m.GetName(), in, false)
	if err != nil {
		return err
	}
	return copyInto(obj, e.obj)
}

// Delete deletes the stored object of obj's kind, namespace and name, as a
// delete through the API does. Only obj's kind, namespace and name are
// read.
func (s *Server) Delete(obj runtime.Object) error {
	res, in, err := s.normalize(obj)
	if err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	_, err = s.deleteLocked(res, in.m.GetNamespace(), in.m.GetName(), nil)
	return err
}

// normalize returns the resource of obj and a copy of obj as the store
// keeps objects of that resource (the resource's Go type, apiVersion and
// kind set).
func (s *Server) normalize(obj runtime.Object) (*resource, *entry, error) {
	res, err := s.reg.forObject(obj)
	if err != nil {
		return nil, nil, err
	}
	obj = obj.DeepCopyObject()
	if u, ok := obj.(*unstructured.Unstructured); ok && res.builtin {
		typed := res.new()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return nil, nil, fmt.Errorf("kubetest: %v as %T: %w", res.gvk, typed, err)
		}
		obj = typed
	}
	if want := reflect.TypeOf(res.new()); reflect.TypeOf(obj) != want {
		return nil, nil, fmt.Errorf("kubetest: %T is not %v, served as %v", obj, res.gvk, want)
	}
	obj.GetObjectKind().SetGroupVersionKind(res.gvk)
	e, err := newEntry(res, obj)
	if err != nil {
		return nil, nil, err
	}
	return res, e, nil
}

// copyInto sets dst, the caller's object, to src, a stored object.
func copyInto(dst, src runtime.Object) error {
	src = src.DeepCopyObject()
	if u, ok := dst.(*unstructured.Unstructured); ok {
		if su, ok := src.(*unstructured.Unstructured); ok {
			u.Object = su.Object
			return nil
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(src)
		u.Object = m
		return err
	}
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
	return nil
}

// placeLocked checks e's namespace against the request's, and fills it in
// when e has none.
func placeLocked(res *resource, ns string, e *entry) error {
	if !res.namespaced {
		e.m.SetNamespace("")
		return nil
	}
	switch have := e.m.GetNamespace(); {
	case have == "":
		e.m.SetNamespace(ns)
	case ns != "" && have != ns:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if e.m.GetNamespace() == "" {
		return apierrors.NewInvalid(res.gvk.GroupKind(), e.m.GetName(), field.ErrorList{field.Required(field.NewPath("metadata", "namespace"), "")})
	}
	return nil
}

// nameAlphabet is the apiserver's alphabet for generated name suffixes.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func (s *Server) createLocked(res *resource, ns string, e *entry) (*entry, error) {
	if err := placeLocked(res, ns, e); err != nil {
		return nil, err
	}
	s.uids++
	if e.m.GetName() == "" {
		if e.m.GetGenerateName() == "" {
			return nil, apierrors.NewInvalid(res.gvk.GroupKind(), "", field.ErrorList{
				field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
		}
		suffix := make([]byte, 5)
		for i, n := len(suffix)-1, s.uids; i >= 0; i, n = i-1, n/uint64(len(nameAlphabet)) {
			suffix[i] = nameAlphabet[n%uint64(len(nameAlphabet))]
		}
		e.m.SetName(e.m.GetGenerateName() + string(suffix))
	}
	e.m.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012x", s.uids)))
	e.m.SetCreationTimestamp(metav1.NewTime(s.clock.Now().Truncate(time.Second)))
	e.m.SetGeneration(1)
	e.m.SetResourceVersion("")
	stored, err := s.store.Create(e)
	if errors.Is(err, fake.ErrExists) {
		return nil, apierrors.NewAlreadyExists(res.groupResource(), e.m.GetName())
	}
	return stored, err
}

// updateLocked replaces the object namespace/name of res with e (status:
// e's status only).
func (s *Server) updateLocked(res *resource, ns, name string, e *entry, status bool) (*entry, error) {
	if err := placeLocked(res, ns, e); err != nil {
		return nil, err
	}
	if e.m.GetName() != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", e.m.GetName(), name))
	}
	cur, ok := s.store.Get(storeNamespace(res, e.m.GetNamespace()), name)
	if !ok {
		return nil, apierrors.NewNotFound(res.groupResource(), name)
	}
	if rv := e.m.GetResourceVersion(); rv != "" && rv != cur.m.GetResourceVersion() {
		return nil, conflict(res, name)
	}
	if uid := e.m.GetUID(); uid != "" && uid != cur.m.GetUID() {
		return nil, apierrors.NewConflict(res.groupResource(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, cur.m.GetUID()))
	}
	curMap, err := toMap(cur.obj)
	if err != nil {
		return nil, err
	}
	newMap, err := toMap(e.obj)
	if err != nil {
		return nil, err
	}
	if status { // the stored object with e's status
		st, ok := newMap["status"]
		if newMap, err = toMap(cur.obj); err != nil {
			return nil, err
		}
		delete(newMap, "status")
		if ok {
			newMap["status"] = st
		}
	}
	if reflect.DeepEqual(withoutRV(curMap), withoutRV(newMap)) {
		return cur, nil // no change: no new version, no event
	}
	next, err := fromMap(res, newMap)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	next.m.SetUID(cur.m.GetUID())
	next.m.SetCreationTimestamp(cur.m.GetCreationTimestamp())
	next.m.SetDeletionTimestamp(cur.m.GetDeletionTimestamp())
	next.m.SetGeneration(cur.m.GetGeneration())
	if !reflect.DeepEqual(specOf(curMap), specOf(newMap)) {
		next.m.SetGeneration(cur.m.GetGeneration() + 1)
	}
	return s.store.Update(next)
}

func conflict(res *resource, name string) error {
	return apierrors.NewConflict(res.groupResource(), name,
		errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}

// toMap returns a copy of obj as JSON-like maps.
func toMap(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy().Object, nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// fromMap makes an entry of res from JSON-like maps.
func fromMap(res *resource, m map[string]any) (*entry, error) {
	obj := res.new()
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.Object = m
	} else if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, obj); err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(res.gvk)
	return newEntry(res, obj)
}

// withoutRV is m with metadata.resourceVersion removed (m is a copy).
func withoutRV(m map[string]any) map[string]any {
	unstructured.RemoveNestedField(m, "metadata", "resourceVersion")
	return m
}

// specOf is what generation counts changes of: everything but metadata
// and status.
func specOf(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != "metadata" && k != "status" {
			out[k] = v
		}
	}
	return out
}

func (s *Server) deleteLocked(res *resource, ns, name string, pre *metav1.Preconditions) (*entry, error) {
	cur, ok := s.store.Get(storeNamespace(res, ns), name)
	if !ok {
		return nil, apierrors.NewNotFound(res.groupResource(), name)
	}
	if pre != nil && pre.UID != nil && *pre.UID != cur.m.GetUID() {
		return nil, apierrors.NewConflict(res.groupResource(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *pre.UID, cur.m.GetUID()))
	}
	if pre != nil && pre.ResourceVersion != nil && *pre.ResourceVersion != cur.m.GetResourceVersion() {
		return nil, apierrors.NewConflict(res.groupResource(), name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *pre.ResourceVersion, cur.m.GetResourceVersion()))
	}
	return s.store.Delete(storeNamespace(res, ns), name)
}

// readBody reads a write's body, refusing dryRun (which the server does not
// implement: it would write).
func readBody(r *http.Request) ([]byte, error) {
	if r.URL.Query().Has("dryRun") {
		return nil, apierrors.NewBadRequest("kubetest does not implement dryRun")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return body, nil
}

func (s *Server) createHTTP(w http.ResponseWriter, r *http.Request, req apiRequest) {
	s.write(w, r, req, http.StatusCreated, func(body []byte) (*entry, error) {
		if req.sub != "" {
			return nil, apierrors.NewMethodNotSupported(req.res.groupResource(), "create")
		}
		e, err := s.decodeEntry(req.res, r.Header.Get("Content-Type"), body)
		if err != nil {
			return nil, err
		}
		return s.createLocked(req.res, req.namespace, e)
	})
}

func (s *Server) updateHTTP(w http.ResponseWriter, r *http.Request, req apiRequest) {
	s.write(w, r, req, http.StatusOK, func(body []byte) (*entry, error) {
		e, err := s.decodeEntry(req.res, r.Header.Get("Content-Type"), body)
		if err != nil {
			return nil, err
		}
		return s.updateLocked(req.res, req.namespace, req.name, e, req.sub == "status")
	})
}

// patchHTTP applies a JSON merge patch, a JSON patch (RFC 6902) or, for a
// built-in resource, a strategic merge patch to the stored object, then
// updates it with the result. Server-side apply is 415 Unsupported Media
// Type.
func (s *Server) patchHTTP(w http.ResponseWriter, r *http.Request, req apiRequest) {
	s.write(w, r, req, http.StatusOK, func(body []byte) (*entry, error) {
		cur, ok := s.store.Get(storeNamespace(req.res, req.namespace), req.name)
		if !ok {
			return nil, apierrors.NewNotFound(req.res.groupResource(), req.name)
		}
		orig, err := json.Marshal(cur.obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		var out []byte
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		switch types.PatchType(mt) {
		case types.MergePatchType:
			out, err = jsonpatch.MergePatch(orig, body)
		case types.JSONPatchType:
			var p jsonpatch.Patch
			if p, err = jsonpatch.DecodePatch(body); err == nil {
				out, err = p.Apply(orig)
			}
		case types.StrategicMergePatchType:
			if !req.res.builtin {
				return nil, unsupportedMedia(mt, req.res)
			}
			out, err = strategicpatch.StrategicMergePatch(orig, body, req.res.new())
		default:
			return nil, unsupportedMedia(mt, req.res) // server-side apply among others
		}
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("applying the patch: %v", err))
		}
		e, err := s.decodeEntry(req.res, mediaJSON, out)
		if err != nil {
			return nil, err
		}
		return s.updateLocked(req.res, req.namespace, req.name, e, req.sub == "status")
	})
}

// deleteHTTP deletes and answers a Status of success, as kube-apiserver
// does for most resources.
func (s *Server) deleteHTTP(w http.ResponseWriter, r *http.Request, req apiRequest) {
	s.write(w, r, req, http.StatusOK, func(body []byte) (*entry, error) {
		if req.sub != "" {
			return nil, apierrors.NewMethodNotSupported(req.res.groupResource(), "delete")
		}
		var opts metav1.DeleteOptions
		if len(body) > 0 {
			gvk := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
			if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, &gvk, &opts); err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding DeleteOptions: %v", err))
			}
		}
		return s.deleteLocked(req.res, req.namespace, req.name, opts.Preconditions)
	})
}

// write runs one write under writeMu and answers with its result in the
// format the request accepts (a delete: a Status of success).
func (s *Server) write(w http.ResponseWriter, r *http.Request, req apiRequest, code int, do func(body []byte) (*entry, error)) {
	f, err := negotiate(r.Header.Get("Accept"), req.res, false)
	if err != nil {
		writeError(w, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.writeMu.Lock()
	e, err := do(body)
	s.writeMu.Unlock()
	if err != nil {
		writeError(w, err)
		return
	}
	if req.verb == "delete" {
		writeObject(w, code, format{}, &metav1.Status{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
			Status:   metav1.StatusSuccess,
			Details: &metav1.StatusDetails{
				Name: req.name, Group: req.res.gvr.Group, Kind: req.res.gvr.Resource, UID: e.m.GetUID(),
			},
		})
		return
	}
	writeObject(w, code, f, f.object(e))
}

// decodeEntry decodes a write's body as an object of res.
func (s *Server) decodeEntry(res *resource, contentType string, body []byte) (*entry, error) {
	obj, err := decodeBody(res, contentType, body)
	if err != nil {
		return nil, err
	}
	return newEntry(res, obj)
}

package kubetest

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// The store is one fake.Source for the whole server, as etcd is one
// keyspace for a whole kube-apiserver: one resource version counter, one
// history, one compaction point. The fake keys an object by the namespace
// and name it reports; an entry reports as its namespace the resource's
// path followed by the object's namespace, so keys read like etcd's
// (apps/deployments/shop/web, /nodes/n1) and a resource's objects sort
// together, by namespace then name, as the apiserver pages them.
//
// What a request selects — its resource, namespace and selectors — is a
// matcher. The fake does not parse selectors: it hands each request's
// listwatch.Options to Options.Filter. So a request reaches the fake with
// its FieldSelector replaced by the key of its matcher, and the filter
// looks the matcher up; the fake's own selector semantics (an object that
// stops matching is a delete on a watch, one that starts matching an add)
// then hold for every resource at once.

// entry is what the store holds: one object of one resource. The object
// carries its apiVersion and kind, and is never changed once stored.
type entry struct {
	res *resource
	obj runtime.Object
	m   metav1.Object // obj's metadata
}

func newEntry(res *resource, obj runtime.Object) (*entry, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	return &entry{res: res, obj: obj, m: m}, nil
}

// storeNamespace is the namespace the store files objects of res in
// namespace ns under.
func storeNamespace(res *resource, ns string) string {
	if !res.namespaced {
		return res.path
	}
	return res.path + "/" + ns
}

func (e *entry) GetNamespace() string {
	if e.res == nil {
		return ""
	}
	return storeNamespace(e.res, e.m.GetNamespace())
}

func (e *entry) GetName() string {
	if e.m == nil {
		return ""
	}
	return e.m.GetName()
}

func (e *entry) GetResourceVersion() string {
	if e.m == nil {
		return ""
	}
	return e.m.GetResourceVersion()
}

// SetResourceVersion stamps the version the store gives a change. The
// fake's bookmarks are entries with no object: the version they carry is
// read from the event.
func (e *entry) SetResourceVersion(v string) {
	if e.m != nil {
		e.m.SetResourceVersion(v)
	}
}

func (e *entry) deepCopy() *entry {
	if e.obj == nil {
		return &entry{res: e.res}
	}
	c, err := newEntry(e.res, e.obj.DeepCopyObject())
	if err != nil {
		panic(err) // a copy of an object with metadata has metadata
	}
	return c
}

// matcher is what a list, watch or get selects.
type matcher struct {
	res       *resource
	namespace string // "" for every namespace
	label     labels.Selector
	field     fields.Selector
	// deep: field names fields of the object, not only of its metadata.
	deep bool
}

func (m *matcher) matches(e *entry) bool {
	if e.res != m.res || (m.namespace != "" && e.m.GetNamespace() != m.namespace) {
		return false
	}
	if !m.label.Empty() && !m.label.Matches(labels.Set(e.m.GetLabels())) {
		return false
	}
	return m.field.Empty() || m.field.Matches(fieldSet(e, m.deep))
}

// fieldSet returns the values of the field labels e's resource supports,
// only those of metadata unless deep.
func fieldSet(e *entry, deep bool) fields.Set {
	set := fields.Set{"metadata.name": e.m.GetName(), "metadata.namespace": e.m.GetNamespace()}
	if !deep {
		return set
	}
	var obj map[string]any
	if u, ok := e.obj.(*unstructured.Unstructured); ok {
		obj = u.Object
	} else if o, err := runtime.DefaultUnstructuredConverter.ToUnstructured(e.obj); err == nil {
		obj = o
	}
	for _, f := range e.res.fields {
		v, _, _ := unstructured.NestedFieldNoCopy(obj, strings.Split(f, ".")...)
		switch v := v.(type) {
		case nil:
			set[f] = ""
		case string:
			set[f] = v
		case bool:
			set[f] = strconv.FormatBool(v)
		default:
			set[f] = fmt.Sprint(v)
		}
	}
	return set
}

// matchers interns matchers by the key a request's Options carry to the
// store's filter. Entries are never removed: there is one per distinct
// resource, namespace and selectors a test asks for.
type matchers struct {
	mu sync.Mutex // guards m
	m  map[string]*matcher
}

// compile parses a request's selectors (400 Bad Request when they do not
// parse or name a field the resource cannot be selected by) and returns the
// key of their matcher.
func (ms *matchers) compile(res *resource, namespace, labelSel, fieldSel string) (string, error) {
	key := strings.Join([]string{res.path, namespace, labelSel, fieldSel}, "\x00")
	ms.mu.Lock()
	_, ok := ms.m[key]
	ms.mu.Unlock()
	if ok {
		return key, nil
	}
	m := &matcher{res: res, namespace: namespace}
	var err error
	if m.label, err = labels.Parse(labelSel); err != nil {
		return "", apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	if m.field, err = fields.ParseSelector(fieldSel); err != nil {
		return "", apierrors.NewBadRequest(fmt.Sprintf("invalid field selector %q: %v", fieldSel, err))
	}
	for _, r := range m.field.Requirements() {
		if !supportsField(res, r.Field) {
			return "", apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", r.Field))
		}
		m.deep = m.deep || !strings.HasPrefix(r.Field, "metadata.")
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.m == nil {
		ms.m = map[string]*matcher{}
	}
	ms.m[key] = m
	return key, nil
}

func supportsField(res *resource, field string) bool {
	if field == "metadata.name" || field == "metadata.namespace" {
		return true
	}
	for _, f := range res.fields {
		if f == field {
			return true
		}
	}
	return false
}

// filter is the store's fake.Options.Filter.
func (ms *matchers) filter(e *entry, opts listwatch.Options) bool {
	ms.mu.Lock()
	m := ms.m[opts.FieldSelector]
	ms.mu.Unlock()
	return m != nil && m.matches(e)
}

// newStore returns the server's store.
func newStore(ms *matchers, opts Options) (*fake.Source[*entry], error) {
	return fake.New(fake.Options[*entry]{
		DeepCopy:         (*entry).deepCopy,
		CompactionWindow: opts.CompactionWindow,
		Filter:           ms.filter,
		Clock:            opts.Clock,
	})
}

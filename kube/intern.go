package kube

import (
	"sync"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
)

// Interning. Objects of one workload repeat most of their bytes: every pod
// of a ReplicaSet carries the same managedFields (FieldsV1 is often the
// largest part of a decoded pod), label and annotation keys, owner, image,
// resource requests. A typed source decodes each object on its own, so
// each object gets its own copy of all of it. The interner replaces, in
// each freshly decoded object, such values by an equal one it has already
// handed out, so the copies become garbage and the cache keeps one.
//
// Interned objects share strings, byte slices (FieldsV1.Raw) and resource
// list maps with each other. That is safe because objects handed out by a
// source's consumers (the cache) are shared and must not be mutated anyway;
// a caller who wants to modify one deep-copies it first (DeepCopy copies
// FieldsV1.Raw and the maps). Shared byte slices are handed out with their
// capacity equal to their length, so even an append copies.
//
// The tables are bounded: a value longer than a limit is never interned,
// and a table that reaches its size is emptied and starts again (values
// already handed out stay shared; only later objects stop sharing with
// them). So a source that sees only unique values costs a bounded amount
// of memory and a map lookup per value.

// Bounds of the interner's tables.
const (
	// internMaxString is the longest string interned: labels, names,
	// images; not last-applied-configuration annotations.
	internMaxString = 256
	// internMaxStrings is the number of strings kept.
	internMaxStrings = 1 << 16
	// internMaxFields is the longest FieldsV1.Raw interned, and
	// internMaxFieldsBytes the total the table refers to (which it keeps
	// alive once the objects holding them are gone).
	internMaxFields      = 64 << 10
	internMaxFieldsBytes = 4 << 20
	// internMaxLists is the number of resource lists kept.
	internMaxLists = 4096
)

// interner holds one source's tables. Its methods other than object and
// pod expect mu held (they are only called from those two).
type interner struct {
	// mu guards the tables and scratch; object takes it once per object,
	// pod for a pod's whole decode, so List and Watch of one source may
	// decode concurrently (a source's pods are decoded one at a time).
	mu         sync.Mutex
	strs       map[string]string
	fields     map[string]*metav1.FieldsV1 // by Raw
	fieldBytes int                         // total len of fields' keys
	lists      map[listKey]corev1.ResourceList
	// specs and statuses are the shared decodes of pods' spec and status
	// fields, by their encoding (see intern_shared.go); spanBytes is the
	// total length of their keys. scratch is the buffer a pod's bytes
	// are rewritten into, reused.
	specs     map[string]*corev1.PodSpec
	statuses  map[string]*corev1.PodStatus
	spanBytes int
	scratch   []byte
}

func newInterner() *interner {
	return &interner{
		strs:     make(map[string]string),
		fields:   make(map[string]*metav1.FieldsV1),
		lists:    make(map[listKey]corev1.ResourceList),
		specs:    make(map[string]*corev1.PodSpec),
		statuses: make(map[string]*corev1.PodStatus),
	}
}

// internCodec makes c intern every object it decodes, in lists and in
// watch events, protobuf or JSON.
func internCodec[T cache.Object](c *codec[T]) {
	in := newInterner()
	if proto := c.protoObject; proto != nil {
		// c.list decodes protobuf items through c.protoObject (read at
		// each call), so protobuf lists are interned item by item here,
		// before the next item is decoded.
		c.protoObject = func(raw []byte) (T, error) {
			t, err := proto(raw)
			if err == nil {
				in.object(t)
			}
			return t, err
		}
		// Pods, the bulk of most caches, also share the decode of their
		// containers and other repeated parts (intern_shared.go).
		if decode, ok := any(proto).(func([]byte) (*corev1.Pod, error)); ok {
			c.protoObject = any(func(raw []byte) (*corev1.Pod, error) {
				return in.pod(raw, decode)
			}).(func([]byte) (T, error))
		}
	}
	jsonObject := c.jsonObject
	c.jsonObject = func(data []byte) (T, error) {
		t, err := jsonObject(data)
		if err == nil {
			in.object(t)
		}
		return t, err
	}
	list := c.list
	c.list = func(body []byte, proto bool) (listwatch.Page[T], error) {
		page, err := list(body, proto)
		if err == nil && !proto {
			for _, t := range page.Items {
				in.object(t)
			}
		}
		return page, err
	}
}

// object interns obj in place: its ObjectMeta (any type that has one), and
// for pods and the workloads holding a pod template, their pod spec.
func (in *interner) object(obj any) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.objectLocked(obj)
}

func (in *interner) objectLocked(obj any) {
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if m, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			in.objectMeta(m)
		}
	}
	in.typed(obj)
}

// str returns the interned copy of s.
func (in *interner) str(s string) string {
	if len(s) == 0 || len(s) > internMaxString {
		return s
	}
	if c, ok := in.strs[s]; ok {
		return c
	}
	if len(in.strs) >= internMaxStrings {
		clear(in.strs)
	}
	in.strs[s] = s
	return s
}

// strs interns the elements of ss in place.
func (in *interner) strList(ss []string) {
	for i, s := range ss {
		ss[i] = in.str(s)
	}
}

// strMap returns m with its keys and values interned: a new map (keys
// cannot be replaced in place), or m itself when it is empty.
func (in *interner) strMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[in.str(k)] = in.str(v)
	}
	return out
}

// fieldsV1 returns the interned FieldsV1 equal to f.
func (in *interner) fieldsV1(f *metav1.FieldsV1) *metav1.FieldsV1 {
	if f == nil || len(f.Raw) > internMaxFields {
		return f
	}
	if c, ok := in.fields[string(f.Raw)]; ok {
		return c
	}
	if in.fieldBytes+len(f.Raw) > internMaxFieldsBytes {
		clear(in.fields)
		in.fieldBytes = 0
	}
	f.Raw = f.Raw[:len(f.Raw):len(f.Raw)]
	// The key aliases f.Raw instead of copying it: the status entry of
	// each pod is unique (it names the pod's IPs), and copies of those
	// would double their memory. f is handed out as immutable, so its
	// bytes, the key's, never change.
	in.fields[unsafe.String(unsafe.SliceData(f.Raw), len(f.Raw))] = f
	in.fieldBytes += len(f.Raw)
	return f
}

func (in *interner) objectMeta(m *metav1.ObjectMeta) {
	m.Namespace = in.str(m.Namespace)
	m.GenerateName = in.str(m.GenerateName)
	m.Labels = in.strMap(m.Labels)
	m.Annotations = in.strMap(m.Annotations)
	in.strList(m.Finalizers)
	for i := range m.OwnerReferences {
		o := &m.OwnerReferences[i]
		o.APIVersion = in.str(o.APIVersion)
		o.Kind = in.str(o.Kind)
		o.Name = in.str(o.Name)
		o.UID = typedStr(in, o.UID)
	}
	for i := range m.ManagedFields {
		e := &m.ManagedFields[i]
		e.Manager = in.str(e.Manager)
		e.Operation = typedStr(in, e.Operation)
		e.APIVersion = in.str(e.APIVersion)
		e.FieldsType = in.str(e.FieldsType)
		e.Subresource = in.str(e.Subresource)
		e.FieldsV1 = in.fieldsV1(e.FieldsV1)
	}
}

// typedStr interns a value of a named string type (corev1.RestartPolicy,
// types.UID, ...).
func typedStr[S ~string](in *interner, s S) S { return S(in.str(string(s))) }

// listKey is a resource list's content, entries sorted by name: equal keys
// mean reflect.DeepEqual lists, because resource.Quantity is compared
// field by field (its inf.Dec by pointer, so a decimal-backed quantity
// never matches another; those lists are simply not shared).
type listKey struct {
	n int
	e [4]listEntry
}

type listEntry struct {
	name corev1.ResourceName
	q    resource.Quantity
}

// resourceList returns the interned resource list equal to l. Lists of more
// than four resources are returned as they are.
func (in *interner) resourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 || len(l) > len(listKey{}.e) {
		return l
	}
	var k listKey
	for name, q := range l {
		e := listEntry{name, q}
		i := k.n
		for ; i > 0 && k.e[i-1].name > name; i-- {
			k.e[i] = k.e[i-1]
		}
		k.e[i] = e
		k.n++
	}
	if c, ok := in.lists[k]; ok {
		return c
	}
	if len(in.lists) >= internMaxLists {
		clear(in.lists)
	}
	in.lists[k] = l
	return l
}

package cache

import (
	"github.com/kinformer/kinformer/internal/rmap"
	"iter"
	"strings"
	"sync/atomic"
)

// objects holds a store's objects by key, in one of two layouts.
//
// Nested (the default): namespace, then name, each an rmap, keyed by the
// stored object's own namespace and name strings, so no key string is
// allocated per object, and the outer map lists the namespaces that hold
// objects. It is used while every stored key is the one MetaNamespaceKey
// would give its object, which fits checks on every write without looking
// at the store's KeyFunc: a custom KeyFunc that happens to give those keys
// gets the nested layout too, and one that does not (for any object) gets
// the flat layout, with the same results.
//
// Flat: a Go map from key to object, for any keys at all. A nested store
// turns flat, for good, on the first key that does not fit (flatten).
//
// Empty inner maps are removed, so the outer map's keys are exactly the
// namespaces of the stored objects.
//
// Concurrency. Writes (put, del, reserve, flatten, adopt) must be
// serialized, and every method but lookup must not overlap a write:
// threadSafeStore's lock sees to both. lookup may run at any time, with no
// lock: in the nested layout it reads rmaps, which take no lock to read,
// and a nested root that is replaced (adopt, flatten) is never written
// again, so a lookup still in it reads a consistent, older state.
type objects[T Object] struct {
	// nested is the root of the nested layout; nil in the flat one.
	nested atomic.Pointer[rmap.Map[*rmap.Map[T]]]
	flat   map[string]T
	n      int // number of objects in nested
	// spare holds empty, presized maps for namespaces that hold nothing
	// yet (see reserve); nil when there are none.
	spare map[string]*rmap.Map[T]
}

// newObjects returns an empty, nested objects.
func newObjects[T Object]() *objects[T] {
	o := &objects[T]{}
	o.nested.Store(new(rmap.Map[*rmap.Map[T]]))
	return o
}

// adopt takes the contents of from, which the caller gives up, in one
// step for concurrent lookups.
func (o *objects[T]) adopt(from *objects[T]) {
	o.flat, o.n, o.spare = from.flat, from.n, from.spare
	o.nested.Store(from.nested.Load())
}

// isNested reports whether o uses the nested layout.
func (o *objects[T]) isNested() bool { return o.flat == nil }

// len returns the number of stored objects.
func (o *objects[T]) len() int {
	if o.flat != nil {
		return len(o.flat)
	}
	return o.n
}

// splitKey splits key into the namespace and name joinKey built it from;
// ok is false for a key joinKey never builds (one starting with '/').
// It allocates nothing.
func splitKey(key string) (namespace, name string, ok bool) {
	namespace, name, found := strings.Cut(key, "/")
	if !found {
		return "", key, true
	}
	return namespace, name, namespace != ""
}

// joinKey is the key MetaNamespaceKey gives an object with this namespace
// and name: "namespace/name", or "name" when namespace is empty.
func joinKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// splits reports whether splitKey(joinKey(namespace, name)) gives back
// namespace and name, that is, whether the nested layout can hold an
// object with this namespace and name.
func splits(namespace, name string) bool {
	if namespace == "" {
		return strings.IndexByte(name, '/') < 0
	}
	return strings.IndexByte(namespace, '/') < 0
}

// fits reports whether obj, stored under key, can live in the nested
// layout: key is joinKey of obj's namespace and name, and splits back into
// them. It is false for a nil obj.
func fits[T Object](key string, obj T) bool {
	if isNil(obj) {
		return false
	}
	ns, name, ok := splitKey(key)
	return ok && ns == obj.GetNamespace() && name == obj.GetName()
}

// flatten switches o to the flat layout, building every key once.
func (o *objects[T]) flatten() {
	root := o.nested.Load()
	if root == nil {
		return
	}
	flat := make(map[string]T, o.n)
	for ns, names := range root.All() {
		for name, obj := range names.All() {
			flat[joinKey(ns, name)] = obj
		}
	}
	o.flat, o.n, o.spare = flat, 0, nil
	o.nested.Store(nil)
}

// get returns the object stored under key.
func (o *objects[T]) get(key string) (obj T, ok bool) {
	if o.flat != nil {
		obj, ok = o.flat[key]
		return obj, ok
	}
	return o.getNested(o.nested.Load(), key)
}

// getNested is get in the nested layout with root.
func (o *objects[T]) getNested(root *rmap.Map[*rmap.Map[T]], key string) (obj T, ok bool) {
	ns, name, valid := splitKey(key)
	if !valid {
		return obj, false
	}
	names, ok := root.Get(ns)
	if !ok {
		return obj, false
	}
	return names.Get(name)
}

// namespace returns the objects of namespace ns in the nested layout, nil
// if it holds none.
func (o *objects[T]) namespace(ns string) *rmap.Map[T] {
	names, _ := o.nested.Load().Get(ns)
	return names
}

// namespaces yields, in the nested layout, each namespace holding objects
// and its objects.
func (o *objects[T]) namespaces() iter.Seq2[string, *rmap.Map[T]] {
	return o.nested.Load().All()
}

// lookup returns the object stored under joinKey(namespace, name). In the
// nested layout it takes no lock and builds no key: see the type's
// concurrency rules. nested reports whether it could answer that way; if
// not, the caller must call lookupFlat under its lock.
//
// A hit at [namespace][name] is always right (that object's key is
// joinKey(namespace, name)), so the check for a '/' that would make the
// key split elsewhere only runs on a miss.
func (o *objects[T]) lookup(namespace, name string) (obj T, ok, nested bool) {
	root := o.nested.Load()
	if root == nil {
		return obj, false, false
	}
	if names, found := root.Get(namespace); found {
		if obj, ok = names.Get(name); ok {
			return obj, true, true
		}
	}
	if splits(namespace, name) {
		return obj, false, true
	}
	obj, ok = o.getNested(root, joinKey(namespace, name))
	return obj, ok, true
}

// lookupFlat is lookup in the flat layout; the caller holds the lock that
// keeps writers out.
func (o *objects[T]) lookupFlat(namespace, name string) (obj T, ok bool) {
	if o.flat == nil { // turned nested again by a Replace meanwhile
		obj, ok, _ = o.lookup(namespace, name)
		return obj, ok
	}
	if namespace == "" {
		obj, ok = o.flat[name]
		return obj, ok
	}
	// A key of up to 128 bytes is built on the stack: the compiler does
	// not allocate a string(bytes) conversion used only as a map index.
	var buf [128]byte
	b := append(append(append(buf[:0], namespace...), '/'), name...)
	obj, ok = o.flat[string(b)]
	return obj, ok
}

// put stores obj under key. In the nested layout, fits(key, obj) must
// hold: the caller flattens o first when it does not.
func (o *objects[T]) put(key string, obj T) {
	if o.flat != nil {
		o.flat[key] = obj
		return
	}
	root := o.nested.Load()
	ns, name := obj.GetNamespace(), obj.GetName()
	names, _ := root.Get(ns)
	if names == nil {
		if names = o.spare[ns]; names != nil {
			delete(o.spare, ns)
		} else {
			names = new(rmap.Map[T])
		}
		root.Put(ns, names)
	}
	before := names.Len()
	names.Put(name, obj)
	o.n += names.Len() - before
}

// reserve makes room for objs, about to be put: each namespace that holds
// nothing yet gets a spare map sized for its objects in objs, which put
// takes when it stores the namespace's first object, and a namespace that
// holds some gets room for the rest, so that putting them does not grow
// maps step by step. It changes no contents. Spares replace those of an
// earlier call; a spare never taken is dropped by the next reserve or
// flatten.
func (o *objects[T]) reserve(objs []T) {
	if o.flat != nil {
		if len(o.flat) == 0 {
			o.flat = make(map[string]T, len(objs))
		}
		return
	}
	counts := make(map[string]int)
	for _, obj := range objs {
		if !isNil(obj) {
			counts[obj.GetNamespace()]++
		}
	}
	root := o.nested.Load()
	root.Reserve(root.Len() + len(counts))
	o.spare = nil
	for ns, n := range counts {
		if names, _ := root.Get(ns); names != nil {
			names.Reserve(names.Len() + n)
			continue
		}
		if n > 1 {
			if o.spare == nil {
				o.spare = make(map[string]*rmap.Map[T], len(counts))
			}
			names := new(rmap.Map[T])
			names.Reserve(n)
			o.spare[ns] = names
		}
	}
}

// del removes what is stored under key, if anything.
func (o *objects[T]) del(key string) {
	if o.flat != nil {
		delete(o.flat, key)
		return
	}
	ns, name, valid := splitKey(key)
	if !valid {
		return
	}
	root := o.nested.Load()
	names, _ := root.Get(ns)
	if names == nil || !names.Del(name) {
		return
	}
	o.n--
	if names.Len() == 0 {
		root.Del(ns)
	}
}

// values yields every stored object, in no particular order.
func (o *objects[T]) values() iter.Seq[T] {
	return func(yield func(T) bool) {
		if o.flat != nil {
			for _, obj := range o.flat {
				if !yield(obj) {
					return
				}
			}
			return
		}
		for _, names := range o.nested.Load().All() {
			for _, obj := range names.All() {
				if !yield(obj) {
					return
				}
			}
		}
	}
}

// all yields every stored key and object, in no particular order. In the
// nested layout each key is built as it is yielded.
func (o *objects[T]) all() iter.Seq2[string, T] {
	return func(yield func(string, T) bool) {
		if o.flat != nil {
			for key, obj := range o.flat {
				if !yield(key, obj) {
					return
				}
			}
			return
		}
		for ns, names := range o.nested.Load().All() {
			for name, obj := range names.All() {
				if !yield(joinKey(ns, name), obj) {
					return
				}
			}
		}
	}
}

// objectsFromMap returns the objects of items, nested if every key fits,
// else flat. It takes ownership of items.
func objectsFromMap[T Object](items map[string]T) *objects[T] {
	o := newObjects[T]()
	for key, obj := range items {
		if !fits(key, obj) {
			return &objects[T]{flat: items}
		}
		o.put(key, obj)
	}
	return o
}

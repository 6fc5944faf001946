package cache

import (
	"iter"
	"strings"
)

// objects holds a store's objects by key, in one of two layouts.
//
// Nested (flat == nil): nested[namespace][name], keyed by the stored
// object's own namespace and name strings, so no key string is allocated
// per object, and the outer map lists the namespaces that hold objects.
// It is used while every stored key is the one MetaNamespaceKey would give
// its object, which fits checks on every write without looking at the
// store's KeyFunc: a custom KeyFunc that happens to give those keys gets
// the nested layout too, and one that does not (for any object) gets the
// flat layout, with the same results.
//
// Flat (flat != nil): flat[key], for any keys at all. A nested store turns
// flat, for good, on the first key that does not fit (flatten).
//
// Empty inner maps are removed, so the outer map's keys are exactly the
// namespaces of the stored objects. An objects value is not safe for
// concurrent use: ThreadSafeStore guards it.
type objects[T Object] struct {
	nested map[string]map[string]T
	flat   map[string]T
	n      int // number of objects in nested
	// spare holds empty, presized maps for namespaces that hold nothing
	// yet (see reserve); nil when there are none.
	spare map[string]map[string]T
}

// newObjects returns an empty, nested objects.
func newObjects[T Object]() objects[T] {
	return objects[T]{nested: make(map[string]map[string]T)}
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
	if o.flat != nil {
		return
	}
	flat := make(map[string]T, o.n)
	for ns, names := range o.nested {
		for name, obj := range names {
			flat[joinKey(ns, name)] = obj
		}
	}
	o.flat, o.nested, o.n, o.spare = flat, nil, 0, nil
}

// get returns the object stored under key.
func (o *objects[T]) get(key string) (obj T, ok bool) {
	if o.flat != nil {
		obj, ok = o.flat[key]
		return obj, ok
	}
	ns, name, valid := splitKey(key)
	if !valid {
		return obj, false
	}
	obj, ok = o.nested[ns][name]
	return obj, ok
}

// getNamespaceName returns the object stored under joinKey(namespace,
// name), without building that key when it can. In the nested layout a hit
// at nested[namespace][name] is always right (that object's key is
// joinKey(namespace, name)), so the check for a '/' that would make the key
// split elsewhere only runs on a miss.
func (o *objects[T]) getNamespaceName(namespace, name string) (obj T, ok bool) {
	if o.flat == nil {
		if obj, ok = o.nested[namespace][name]; ok || splits(namespace, name) {
			return obj, ok
		}
		return o.get(joinKey(namespace, name))
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
	ns, name := obj.GetNamespace(), obj.GetName()
	names := o.nested[ns]
	if names == nil {
		if names = o.spare[ns]; names != nil {
			delete(o.spare, ns)
		} else {
			names = make(map[string]T, 1)
		}
		o.nested[ns] = names
	}
	before := len(names)
	names[name] = obj
	o.n += len(names) - before
}

// reserve makes room for objs, about to be put: each namespace that holds
// nothing yet gets a spare map sized for its objects in objs, which put
// takes when it stores the namespace's first object, so that putting them
// does not grow maps step by step. It changes no contents; maps that
// already hold objects are left alone (a Go map cannot be grown in place).
// Spares replace those of an earlier call; a spare never taken is dropped
// by the next reserve or flatten.
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
	if len(o.nested) == 0 {
		o.nested = make(map[string]map[string]T, len(counts))
	}
	o.spare = nil
	for ns, n := range counts {
		if o.nested[ns] == nil && n > 1 {
			if o.spare == nil {
				o.spare = make(map[string]map[string]T, len(counts))
			}
			o.spare[ns] = make(map[string]T, n)
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
	names := o.nested[ns]
	if _, had := names[name]; !had {
		return
	}
	o.n--
	if len(names) == 1 {
		delete(o.nested, ns)
		return
	}
	delete(names, name)
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
		for _, names := range o.nested {
			for _, obj := range names {
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
		for ns, names := range o.nested {
			for name, obj := range names {
				if !yield(joinKey(ns, name), obj) {
					return
				}
			}
		}
	}
}

// objectsFromMap returns the objects of items, nested if every key fits,
// else flat. It takes ownership of items.
func objectsFromMap[T Object](items map[string]T) objects[T] {
	o := newObjects[T]()
	for key, obj := range items {
		if !fits(key, obj) {
			return objects[T]{flat: items}
		}
		o.put(key, obj)
	}
	return o
}

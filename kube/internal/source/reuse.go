package source

import (
	"sync/atomic"
	"unsafe"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/wire"
)

// Reusing cached objects on a relist. When an informer relists (its
// watch expired, the apiserver restarted, or it started from a checkpoint
// whose version is gone), nearly every listed object is one it already
// holds at the same resource version. Decoding those again costs the CPU
// of a cold start and, until the relist is applied, a second copy of the
// cache. So the factory has every informer's protobuf source read an
// object's namespace, name and resource version off the wire (objectMetaOf:
// a walk of the protobuf fields, no allocation but the three strings) for
// list items and added events and hand back the cached object when it is at that version, decoding only
// the others; while the cache is empty (the first list) it does not even
// look. Objects at one resource version are the same object, so nothing a
// caller can see changes; the handed-back object is already transformed,
// so the informer's Transform is skipped for it (SkipCached). Measured by
// the relist-peak lines of bench/cmd/controlplane -memory and the
// warm-restart scenario's expired lines.

// CachedLookup finds an informer's cached objects, once the informer
// exists (SetReader is called right after it is built, before it runs).
// The zero value finds nothing.
type CachedLookup[T cache.Object] struct {
	reader atomic.Pointer[cache.Reader[T]]
}

// SetReader gives l the informer's cache.
func (l *CachedLookup[T]) SetReader(r cache.Reader[T]) { l.reader.Store(&r) }

// ReuseCached makes s hand back the object l finds at the resource version
// an item's bytes carry instead of decoding them (see reuseCached), and
// reports whether it does: a source that decodes no protobuf does not.
// Call it before s is used, and after ProtoDecoder.
func (s *Source[T]) ReuseCached(l *CachedLookup[T]) bool {
	if s.codec.protoObject == nil {
		return false
	}
	reuseCached(s.codec, l.empty, l.at)
	return true
}

// empty reports whether there is no cached object to reuse (or no cache
// yet): the decoder then does not read the metadata off the wire.
func (l *CachedLookup[T]) empty() bool {
	r := l.reader.Load()
	return r == nil || r.Len() == 0
}

// at returns the cached object of namespace/name if it is at rv. It
// keeps none of its arguments (see reuseCached).
func (l *CachedLookup[T]) at(namespace, name, rv string) (T, bool) {
	var zero T
	r := l.reader.Load()
	if r == nil {
		return zero, false
	}
	obj, ok := r.GetByNamespaceName(namespace, name)
	if !ok || obj.GetResourceVersion() != rv {
		return zero, false
	}
	return obj, true
}

// isCached reports whether obj is the very object the cache holds.
func (l *CachedLookup[T]) isCached(obj T) bool {
	r := l.reader.Load()
	if r == nil {
		return false
	}
	cur, ok := r.GetByNamespaceName(obj.GetNamespace(), obj.GetName())
	return ok && any(cur) == any(obj)
}

// SkipCached wraps transform so that it leaves alone an object the cache
// holds already (reused, so transformed before, and shared: it must not
// be written to). A nil transform stays nil.
func (l *CachedLookup[T]) SkipCached(transform func(T) (T, error)) func(T) (T, error) {
	if transform == nil {
		return nil
	}
	return func(obj T) (T, error) {
		if l.isCached(obj) {
			return obj, nil
		}
		return transform(obj)
	}
}

// reuseCached makes c's protobuf decoder hand back the object lookup
// finds at the resource version the bytes carry, instead of decoding
// them; lookup must not keep its arguments (views of the bytes). c must be a codec of one source only, changed before it is used;
// empty, when it reports true, skips the lookup altogether. Watch events
// other than adds (modifications, deletes, bookmarks) carry a version no
// cache holds yet, so they skip it too (protoChanged): only list items and added events, which
// is what a relist or a streaming list brings, are looked up.
func reuseCached[T cache.Object](c *codec[T], empty func() bool, lookup func(namespace, name, rv string) (T, bool)) {
	decode := c.protoObject
	if decode == nil {
		return
	}
	c.protoChanged = decode
	c.protoObject = func(raw []byte) (T, error) {
		if empty() {
			return decode(raw)
		}
		// The three strings are views of raw, which lookup only compares
		// (it keeps none of them): see objectMetaOf.
		if ns, name, rv, ok := objectMetaOf(raw); ok && rv != "" {
			if obj, ok := lookup(ns, name, rv); ok {
				return obj, nil
			}
		}
		return decode(raw)
	}
}

// Field numbers of ObjectMeta in every Kubernetes object, and of its
// name, namespace and resourceVersion.
const (
	objectMetaField     = 1
	metaNameField       = 1
	metaNamespaceField  = 3
	metaResourceVersion = 6
)

// objectMetaOf reads namespace, name and resource version from an
// object's protobuf bytes (envelope removed), ok false when they cannot be
// read. The strings are views of raw, not copies (unsafe.String): valid
// only while raw is unchanged, for comparing, never to keep. A relist
// looks up every listed object, and copies of the three would be garbage
// added to a heap that already holds the whole cache: the
// warm-restart-view-expired-rss line of bench/cmd/controlplane
// -warm-restart measures it.
func objectMetaOf(raw []byte) (namespace, name, rv string, ok bool) {
	f := wire.Fields{B: raw}
	for {
		fld, more, err := f.Next()
		if err != nil || !more {
			return "", "", "", false
		}
		if fld.Num != objectMetaField || fld.Type != wire.Bytes {
			continue
		}
		m := wire.Fields{B: fld.Bytes}
		for {
			mf, more, err := m.Next()
			if err != nil {
				return "", "", "", false
			}
			if !more {
				return namespace, name, rv, name != ""
			}
			if mf.Type != wire.Bytes {
				continue
			}
			switch mf.Num {
			case metaNameField:
				name = bytesView(mf.Bytes)
			case metaNamespaceField:
				namespace = bytesView(mf.Bytes)
			case metaResourceVersion:
				rv = bytesView(mf.Bytes)
			}
		}
	}
}

// bytesView returns b's bytes as a string without copying them; b must
// not change while the string is in use.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

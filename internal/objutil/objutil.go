// Package objutil holds small helpers on stored objects that the cache,
// the queues and the reflector share. The one that uses package unsafe,
// Same, is a speed trick and names the benchmark that pays for it.
package objutil

import (
	"reflect"
	"unsafe"
)

// IsNil reports whether v is nil: a nil interface, or a nil pointer, map,
// channel, func or slice, on which an object's methods would panic. It is
// the one nil check of kinformer. It uses reflect: reading the interface's
// data word with unsafe instead saves about 2 ns per call
// (BenchmarkIsNil against BenchmarkIsNilUnsafe), which no cache or
// queue benchmark can tell from noise.
func IsNil[T any](v T) bool {
	rv := reflect.ValueOf(any(v))
	if !rv.IsValid() {
		return true
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// Same reports whether a and b are the same object: the same pointer for
// a pointer-shaped T. It reads the interface data words like IsNil; for
// other shapes two values compare the same only when both are boxed at the
// same static zero value, in which case they are equal anyway. A false
// result means only "not known to be the same".
//
// The cache uses it to skip re-indexing when an object is stored again
// unchanged (a resync): BenchmarkIndexerResync in cache.
func Same[T any](a, b T) bool {
	x, y := any(a), any(b)
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&x))[1] == (*[2]unsafe.Pointer)(unsafe.Pointer(&y))[1]
}

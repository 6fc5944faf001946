package controllerruntime

import (
	"reflect"
)

// DeepCopy returns a deep copy of the view *v: every pointer, slice and map
// it holds, at any depth, is copied, so nothing of the copy is shared with
// v. It is how a view type writes the DeepCopyObject that runtime.Object
// asks for:
//
//	func (v *PodView) DeepCopyObject() runtime.Object { return controllerruntime.DeepCopy(v) }
//
// Values held in interfaces and the unexported fields of structs are
// copied as they are (a view declares neither).
func DeepCopy[V any](v *V) *V {
	if v == nil {
		return nil
	}
	out := new(V)
	copyValue(reflect.ValueOf(out).Elem(), reflect.ValueOf(v).Elem())
	return out
}

// copyValue sets dst, which is settable, to a deep copy of src.
func copyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		p := reflect.New(src.Type().Elem())
		copyValue(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Struct:
		dst.Set(src) // unexported fields as they are
		for i := 0; i < src.NumField(); i++ {
			if f := dst.Field(i); f.CanSet() {
				copyValue(f, src.Field(i))
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := 0; i < src.Len(); i++ {
			copyValue(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Array:
		for i := 0; i < src.Len(); i++ {
			copyValue(dst.Index(i), src.Index(i))
		}
	case reflect.Map:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			val := reflect.New(src.Type().Elem()).Elem()
			copyValue(val, it.Value())
			m.SetMapIndex(it.Key(), val)
		}
		dst.Set(m)
	default:
		dst.Set(src)
	}
}

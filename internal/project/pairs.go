package project

import (
	"reflect"
	"sort"
	"unsafe"

	"github.com/kinformer/kinformer/internal/wire"
)

// PairsTag marks a pairs type: a struct whose only field is a []string
// tagged `kinformer:"pairs"`, holding a map of strings as key, value,
// key, value..., sorted by key (kube.Labels). A view field of such a type
// reads a map of strings, in about half the memory of a Go map: a map of
// up to eight entries allocates a table of eight (BenchmarkPairsHeap
// measures both).
const PairsTag = "pairs"

var stringsType = reflect.TypeFor[[]string]()

// isPairs reports whether t is a pairs type.
func isPairs(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.NumField() == 1 && t.Field(0).Type == stringsType &&
		t.Field(0).Offset == 0 && t.Field(0).Tag.Get("kinformer") == PairsTag
}

// insertPair sets key to value in the sorted pairs kv (a later entry of
// a key replaces an earlier one, as a map's would) and returns kv.
func insertPair(kv []string, key, value string) []string {
	n := len(kv) / 2
	i := sort.Search(n, func(i int) bool { return kv[2*i] >= key })
	if i < n && kv[2*i] == key {
		kv[2*i+1] = value
		return kv
	}
	kv = append(kv, "", "")
	copy(kv[2*i+2:], kv[2*i:])
	kv[2*i], kv[2*i+1] = key, value
	return kv
}

// pairsEntry adds one map entry to the pairs at p, making them, sized for
// every entry of the message, on the first.
func (d *decoder) pairsEntry(p unsafe.Pointer, f wire.Field, rest []byte) error {
	k, v, _, err := entry(f.Bytes)
	if err != nil {
		return err
	}
	if v.Type != wire.Bytes && v.Num != 0 {
		return malformed("map value of wire type %d", v.Type)
	}
	kv := (*[]string)(p)
	if *kv == nil {
		*kv = make([]string, 0, 2*(1+wire.Count(rest, f.Num)))
	}
	*kv = insertPair(*kv, d.str(k, true), d.str(v.Bytes, true))
	return nil
}

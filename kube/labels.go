package kube

import (
	"encoding/json"
	"iter"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
)

// Labels is a map of strings as a view holds it: ViewMeta.Labels, and any
// view field declared with it (`kube:"spec.selector.matchLabels"`). Its
// pairs sit sorted by key in one slice, about half the memory of a Go map
// of the same entries (a map of up to eight entries takes a whole table
// of eight). Look-ups are binary searches.
//
// A Labels is immutable: nothing changes it once made, so copies of it
// share its pairs safely. Its zero value is empty. It is a labels.Labels,
// so a selector matches it as is (selector.Matches(v.Labels)), and it
// reads and writes JSON as an object of strings. Like resource.Quantity
// it compares with its Equal method (go-cmp uses it) and with
// apimachinery's equality.Semantic, which this package teaches it to.
type Labels struct {
	// kv holds key, value, key, value..., sorted by key, keys distinct.
	// The view decoder (internal/project) recognizes the struct by this
	// field's tag and fills kv itself.
	kv []string `kinformer:"pairs"`
}

// LabelsOf returns the entries of m as a Labels (empty for an empty or
// nil m).
func LabelsOf(m map[string]string) Labels {
	if len(m) == 0 {
		return Labels{}
	}
	kv := make([]string, 0, 2*len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, k, m[k])
	}
	return Labels{kv: kv}
}

func init() {
	// equality.Semantic.DeepEqual (the informer's mutation detector,
	// tests) panics on unexported fields unless told how to compare.
	if err := equality.Semantic.AddFunc(func(a, b Labels) bool { return a.Equal(b) }); err != nil {
		panic(err)
	}
}

// Equal reports whether l and o hold the same entries.
func (l Labels) Equal(o Labels) bool { return slices.Equal(l.kv, o.kv) }

// Len returns the number of entries.
func (l Labels) Len() int { return len(l.kv) / 2 }

// Lookup returns the value of key and whether l has it.
func (l Labels) Lookup(key string) (string, bool) {
	n := len(l.kv) / 2
	i := sort.Search(n, func(i int) bool { return l.kv[2*i] >= key })
	if i < n && l.kv[2*i] == key {
		return l.kv[2*i+1], true
	}
	return "", false
}

// Get returns the value of key, "" when l does not have it.
func (l Labels) Get(key string) string {
	v, _ := l.Lookup(key)
	return v
}

// Has reports whether l has key.
func (l Labels) Has(key string) bool {
	_, ok := l.Lookup(key)
	return ok
}

// All yields the entries in order of their keys.
func (l Labels) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for i := 0; i+1 < len(l.kv); i += 2 {
			if !yield(l.kv[i], l.kv[i+1]) {
				return
			}
		}
	}
}

// Map returns the entries in a new map, which the caller owns (nil when
// l is empty).
func (l Labels) Map() map[string]string {
	if len(l.kv) == 0 {
		return nil
	}
	m := make(map[string]string, len(l.kv)/2)
	for k, v := range l.All() {
		m[k] = v
	}
	return m
}

// String returns the entries as apimachinery's labels.Set writes them:
// "key1=value1,key2=value2", sorted.
func (l Labels) String() string {
	entries := make([]string, 0, l.Len())
	for k, v := range l.All() {
		entries = append(entries, k+"="+v)
	}
	slices.Sort(entries)
	return strings.Join(entries, ",")
}

// MarshalJSON writes l as an object of strings, null when l is empty.
func (l Labels) MarshalJSON() ([]byte, error) {
	if len(l.kv) == 0 {
		return []byte("null"), nil
	}
	return json.Marshal(l.Map())
}

// UnmarshalJSON reads an object of strings (or null, for none).
func (l *Labels) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*l = LabelsOf(m)
	return nil
}

var _ labels.Labels = Labels{}

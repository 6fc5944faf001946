package cache

import (
	"fmt"
	"strconv"
	"strings"
)

// prepareList is prepare for every item of a Replace, skipping each one
// that fails: it returns the prepared objects in order (items itself when
// none was transformed or skipped), their keys, and the error of each
// skipped item, in list order. It reads each object once: on a list of
// 100,000 objects every further pass costs a cache miss per object
// (BenchmarkDeltaFIFOFirstList100k).
func (f *DeltaFIFO[T]) prepareList(items []T) (objs []T, keys []string, skipped []error) {
	objs = items
	copied := f.transform != nil // objs is a new slice, filled as we go
	if copied {
		objs = make([]T, 0, len(items))
	}
	keys = make([]string, 0, len(items))
	var kb keyBuilder
	if f.defaultKey {
		kb.b.Grow(keysSize(items))
	}
	for i, item := range items {
		obj, err := f.transformed(item)
		var key string
		switch {
		case err != nil:
		case f.defaultKey:
			key, err = kb.key(obj.GetNamespace(), obj.GetName())
		default:
			if key, err = f.keyFunc(obj); err != nil {
				err = fmt.Errorf("computing key: %w", err)
			}
		}
		if err != nil {
			if !copied {
				objs = append(make([]T, 0, len(items)-1), items[:i]...)
				copied = true
			}
			skipped = append(skipped, itemError(i, item, err))
			continue
		}
		if copied {
			objs = append(objs, obj)
		}
		keys = append(keys, key)
	}
	return objs, keys, skipped
}

// keyBuilder builds the keys MetaNamespaceKey gives a list's objects into
// one buffer: one allocation for the list instead of one per key
// (BenchmarkDeltaFIFOFirstList100k). A key stays valid as the buffer
// grows, since strings.Builder never changes bytes it has handed out, and
// keeps alive the buffer it was built in: the keys of a list are meant to
// be dropped together, as a queue's are once popped. Size the buffer
// first (keysSize) so that it rarely grows.
type keyBuilder struct {
	b strings.Builder
}

// key returns the key of the object with this namespace and name, or
// MetaNamespaceKey's error.
func (kb *keyBuilder) key(namespace, name string) (string, error) {
	if err := checkName(namespace, name); err != nil {
		return "", fmt.Errorf("computing key: %w", err)
	}
	start := kb.b.Len()
	if namespace != "" {
		kb.b.WriteString(namespace)
		kb.b.WriteByte('/')
	}
	kb.b.WriteString(name)
	return kb.b.String()[start:], nil
}

// keysSize estimates the bytes of the keys of items, from up to 32 of them
// spread over the list, with a quarter more for the ones not sampled.
func keysSize[T Object](items []T) int {
	const samples = 32
	sum, n := 0, 0
	for k := range min(len(items), samples) {
		item := items[k*len(items)/min(len(items), samples)]
		if isNil(item) {
			continue
		}
		sum += len(item.GetNamespace()) + 1 + len(item.GetName())
		n++
	}
	if n == 0 {
		return 0
	}
	return len(items) * sum / n * 5 / 4
}

// itemError names item i of a list in its error.
func itemError[T Object](i int, item T, err error) error {
	if isNil(item) {
		return fmt.Errorf("item %d: %w", i, err)
	}
	name := item.GetName()
	if ns := item.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Errorf("item %d (%s): %w", i, strconv.Quote(name), err)
}

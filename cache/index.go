package cache

import "slices"

// NamespaceIndex is the conventional name of the index built by
// MetaNamespaceIndexFunc.
const NamespaceIndex = "namespace"

// MetaNamespaceIndexFunc indexes an object under its namespace. It fails
// with an error matching ErrInvalidObject on a nil object.
func MetaNamespaceIndexFunc[T Object](obj T) ([]string, error) {
	if isNil(obj) {
		return nil, ErrInvalidObject
	}
	return []string{obj.GetNamespace()}, nil
}

// index maps each value of one index function to the set of keys whose
// object has that value. Empty sets are removed, so the values of an index
// are exactly its map keys.
type index map[string]map[string]struct{}

func (idx index) insert(value, key string) {
	set := idx[value]
	if set == nil {
		set = make(map[string]struct{}, 1)
		idx[value] = set
	}
	set[key] = struct{}{}
}

func (idx index) remove(value, key string) {
	set := idx[value]
	if set == nil {
		return
	}
	delete(set, key)
	if len(set) == 0 {
		delete(idx, value)
	}
}

// removeEverywhere removes key from every value of idx. It is the slow path
// for when the values an old object was indexed under cannot be computed
// again (an index function that is not deterministic, which is a bug in
// that function, but must not leave dangling keys behind).
func (idx index) removeEverywhere(key string) {
	for value, set := range idx {
		if _, ok := set[key]; ok {
			idx.remove(value, key)
		}
	}
}

// update moves key from the values in oldVals to those in newVals, touching
// only the values that differ.
func (idx index) update(key string, oldVals, newVals []string) {
	if len(oldVals) == 1 && len(newVals) == 1 && oldVals[0] == newVals[0] {
		return // the common case: the namespace, say, did not change
	}
	if len(oldVals)*len(newVals) > 64 {
		// Many values: set semantics make remove-all-then-insert-all exact,
		// and it is linear rather than quadratic.
		for _, v := range oldVals {
			idx.remove(v, key)
		}
		for _, v := range newVals {
			idx.insert(v, key)
		}
		return
	}
	for _, v := range oldVals {
		if !slices.Contains(newVals, v) {
			idx.remove(v, key)
		}
	}
	for _, v := range newVals {
		if !slices.Contains(oldVals, v) {
			idx.insert(v, key)
		}
	}
}

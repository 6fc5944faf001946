package intern

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// maxLists is the number of resource lists the table keeps.
const maxLists = 4096

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

// resourceList returns the shared resource list equal to l. Lists of more
// than four resources are returned as they are.
func (in *Interner) resourceList(l corev1.ResourceList) corev1.ResourceList {
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
	if len(in.lists) >= maxLists {
		clear(in.lists)
	}
	in.lists[k] = l
	return l
}

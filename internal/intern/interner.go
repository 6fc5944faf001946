package intern

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Options choose what an Interner shares. The zero value interns strings
// only.
type Options struct {
	// ShareParts makes the Interner share mutable values too (FieldsV1,
	// resource lists, a pod's spec and status runs; see the package doc).
	// Its gain is BenchmarkRetained's shared-parts line against its
	// strings line.
	ShareParts bool
}

// Interner holds the tables of one source. Its tables are bounded: a value
// longer than a limit is never interned, and a table that reaches its size
// is emptied and starts again (values already handed out stay shared; only
// later objects stop sharing with them). So a source that sees only unique
// values costs a bounded amount of memory and a map lookup per value.
//
// Its methods are safe for concurrent use; they serialize on one mutex,
// which a source's List and Watch decoding take in turn.
//
// An Interner pays for itself in memory retained per cached object:
// BenchmarkRetained compares it with plain decoding.
type Interner struct {
	// tricks are the ways of sharing in use, fixed by New.
	tricks trick
	// mu guards every field below; Object takes it once per object, Pod
	// for a pod's whole decode. Methods ending in Locked expect it held.
	mu   sync.Mutex
	strs map[string]string
	// fields and lists are the shared FieldsV1 and resource lists,
	// fieldBytes the total length of fields' keys (nil maps when not
	// sharing parts).
	fields     map[string]*metav1.FieldsV1
	fieldBytes int
	lists      map[listKey]corev1.ResourceList
	// specs and statuses are the shared decodes of pods' spec and status
	// runs, by their encoding (see shared.go); spanBytes is the total
	// length of their keys.
	specs     map[string]*corev1.PodSpec
	statuses  map[string]*corev1.PodStatus
	spanBytes int
}

// New returns an Interner with empty tables, sharing what opts ask. Each
// way of sharing it turns on is measured by BenchmarkRetained (see the
// package doc).
func New(opts Options) *Interner {
	in := &Interner{strs: make(map[string]string)}
	if opts.ShareParts {
		in.tricks = allTricks
		in.fields = make(map[string]*metav1.FieldsV1)
		in.lists = make(map[listKey]corev1.ResourceList)
		in.specs = make(map[string]*corev1.PodSpec)
		in.statuses = make(map[string]*corev1.PodStatus)
	}
	return in
}

// Object interns obj in place: its ObjectMeta (any type that has one), and
// for pods and the workloads holding a pod template, their pod spec (and a
// pod's status). obj must be freshly decoded, referenced by nobody else.
// Its gain is BenchmarkRetained's strings line against its plain line.
func (in *Interner) Object(obj any) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.objectLocked(obj)
}

func (in *Interner) objectLocked(obj any) {
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if m, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			in.objectMeta(m)
		}
	}
	in.typed(obj)
}

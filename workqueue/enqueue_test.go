package workqueue

import (
	"errors"
	"slices"
	"testing"

	"github.com/kinformer/kinformer/cache"
)

// obj is the smallest cache.Object.
type obj struct{ ns, name, rv string }

func (o *obj) GetNamespace() string       { return o.ns }
func (o *obj) GetName() string            { return o.name }
func (o *obj) GetResourceVersion() string { return o.rv }

func TestEnqueuePutsChangesAheadOfTheInitialList(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	h := NewEnqueue(q, EnqueueOptions[*obj, string]{Key: cache.MetaNamespaceKey[*obj]})

	a1, b1, c1, d1 := &obj{"ns", "a", "1"}, &obj{"ns", "b", "1"}, &obj{"ns", "c", "1"}, &obj{"ns", "d", "1"}
	h.OnAdd(a1, true)
	h.OnAdd(b1, true)
	h.OnAdd(c1, true)
	h.OnAdd(d1, true)
	h.OnAdd(&obj{"ns", "new", "5"}, false)     // created after the list
	h.OnUpdate(c1, &obj{"ns", "c", "6"})       // a real change: raised
	h.OnUpdate(d1, d1)                         // a resync: stays low
	h.OnDelete(&obj{"ns", "gone", "7"}, false) // deleted: normal
	var got []string
	for range 6 {
		got = append(got, getNow(q))
	}
	want := []string{"ns/new", "ns/c", "ns/gone", "ns/a", "ns/b", "ns/d"}
	if !slices.Equal(got, want) {
		t.Fatalf("handed out %v, want %v", got, want)
	}
}

func TestEnqueueInitialPriorityOption(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	h := NewEnqueue(q, EnqueueOptions[*obj, string]{
		Key:             cache.MetaNamespaceKey[*obj],
		InitialPriority: new(PriorityNormal), // no priorities: one FIFO
	})
	h.OnAdd(&obj{"ns", "a", "1"}, true)
	h.OnAdd(&obj{"ns", "b", "2"}, false)
	h.OnAdd(&obj{"ns", "c", "1"}, true)
	if got := []string{getNow(q), getNow(q), getNow(q)}; !slices.Equal(got, []string{"ns/a", "ns/b", "ns/c"}) {
		t.Fatalf("handed out %v", got)
	}
}

func TestEnqueueSkipsObjectsWithoutKey(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	h := NewEnqueue(q, EnqueueOptions[*obj, string]{Key: func(o *obj) (string, error) {
		if o.name == "" {
			return "", errors.New("no name")
		}
		return o.name, nil
	}})
	h.OnAdd(&obj{}, false)
	h.OnAdd(&obj{name: "x"}, false)
	if q.Len() != 1 || getNow(q) != "x" {
		t.Fatal("the object without a key was queued, or the other was not")
	}
}

func TestNewEnqueueWithoutKeyPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	NewEnqueue(New(Options[string]{}), EnqueueOptions[*obj, string]{})
}

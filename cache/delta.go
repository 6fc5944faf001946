package cache

// DeltaType says what kind of change a Delta records.
type DeltaType string

const (
	// Added: the object was created (or first seen by a watch).
	Added DeltaType = "Added"
	// Updated: the object changed.
	Updated DeltaType = "Updated"
	// Deleted: the object was deleted. With Delta.StateUnknown set, the
	// deletion was inferred by a relist and Object is the last known state.
	Deleted DeltaType = "Deleted"
	// Replaced: the object was in a relist (Replace).
	Replaced DeltaType = "Replaced"
	// Sync: a periodic resync re-delivered the object unchanged; also used
	// for relisted objects by a DeltaFIFO with ReplaceEmitsSync set.
	Sync DeltaType = "Sync"
)

// Delta is one change to one object.
type Delta[T Object] struct {
	Type DeltaType
	// Object is the state after the change; for Deleted, the last state.
	Object T
	// StateUnknown is set only on a Deleted delta that a Replace inferred
	// because the object was missing from the new list: the deletion
	// itself was missed, and Object is the last state known here.
	StateUnknown bool
}

// Deltas are the changes to one object, oldest first.
type Deltas[T Object] []Delta[T]

// Oldest returns the first delta, and false when there is none.
func (d Deltas[T]) Oldest() (Delta[T], bool) {
	if len(d) == 0 {
		return Delta[T]{}, false
	}
	return d[0], true
}

// Newest returns the last delta, and false when there is none.
func (d Deltas[T]) Newest() (Delta[T], bool) {
	if len(d) == 0 {
		return Delta[T]{}, false
	}
	return d[len(d)-1], true
}

// appendDelta appends nd to d, collapsing two consecutive deletions into
// one: of the two, the one whose final state is known is kept (the older
// one when both or neither are).
func appendDelta[T Object](d Deltas[T], nd Delta[T]) Deltas[T] {
	if n := len(d); n > 0 && nd.Type == Deleted && d[n-1].Type == Deleted {
		if d[n-1].StateUnknown && !nd.StateUnknown {
			d[n-1] = nd
		}
		return d
	}
	return append(d, nd)
}

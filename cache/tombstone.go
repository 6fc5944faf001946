package cache

// Tombstone stands for a deletion whose final state was missed: the watch
// broke while the object was deleted, and the relist that followed no
// longer contained it. Last is the last state this process knew, which may
// be older than the object's state when it was deleted.
//
// A DeltaFIFO reports such a deletion as a Deleted delta with StateUnknown
// set and Object holding the last known state, so consumers never need a
// type switch; Tombstone is the form for code that carries such a deletion
// further together with its key (a handler notification, say).
type Tombstone[T Object] struct {
	// Key is the key the object was stored under.
	Key string
	// Last is the last known state of the object.
	Last T
}

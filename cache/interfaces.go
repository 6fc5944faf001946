package cache

// Object is what every store, queue and informer in kinformer holds. Every
// Kubernetes API object (typed, unstructured or metadata-only) satisfies it.
type Object interface {
	GetNamespace() string
	GetName() string
	GetResourceVersion() string
}

// KeyFunc computes the key an object is stored under. It must be
// deterministic and must not mutate the object.
type KeyFunc[T Object] func(obj T) (string, error)

// Writer is what a reflector writes to keep a store (or a DeltaFIFO) in
// step with a source: the source's changes, in order, each with the
// resource version the source is at after it. The version rides with the
// data: a change's version is its object's resource version (read before
// any transform), a list's is the version it was served at, and a
// bookmark's is its own. A Writer that keeps its content at a known
// version records them; StoreWriter does so for any Store, DeltaFIFO
// marks every entry it queues with them (DeltaFIFO.Reached).
//
// A relist is part of the contract, not an option: Replace takes a list
// whole, BeginRelist takes it piece by piece as it arrives (kube-rs's
// Init, InitApply, InitDone), so that the old content and the whole new
// list are never held together. Every Writer has both.
type Writer[T Object] interface {
	// Add inserts obj, or replaces the object stored under the same key.
	Add(obj T) error
	// Update replaces the object stored under obj's key, or inserts it.
	Update(obj T) error
	// Delete removes the object stored under obj's key, if any.
	Delete(obj T) error
	// Replace atomically swaps the whole content for items, listed at
	// resourceVersion.
	Replace(items []T, resourceVersion string) error
	// BeginRelist starts a relist applied as it arrives (see
	// RelistSession), or reports false when the writer takes this list
	// whole with Replace: it holds nothing yet (a first list), so there
	// is no old content to hold twice. One relist at a time; the caller
	// ends it with Finish or Abort before any other write.
	BeginRelist() (RelistSession[T], bool)
	// Bookmark records that the source has reached resourceVersion
	// without a change to any object (a watch bookmark).
	Bookmark(resourceVersion string)
}

// Store is a keyed collection of objects, safe for concurrent use: writes
// plus reads. Returned objects are shared and must not be mutated.
// Indexer, ExpirationStore, UndeltaStore and FIFO are Stores; an
// informer's cache is not (its readers get a Reader, which cannot write).
// A Store keeps no resource version: to keep one in step with a source
// through a reflector, wrap it in a StoreWriter.
type Store[T Object] interface {
	// Add inserts obj, or replaces the object stored under the same key.
	Add(obj T) error
	// Update replaces the object stored under obj's key, or inserts it.
	Update(obj T) error
	// Delete removes the object stored under obj's key, if any.
	Delete(obj T) error
	// Replace atomically swaps the whole content for items.
	Replace(items []T) error
	// List returns every stored object, in no particular order.
	List() []T
	// ListKeys returns every stored key, in no particular order.
	ListKeys() []string
	// Get returns the object stored under obj's key.
	Get(obj T) (item T, exists bool, err error)
	// GetByKey returns the object stored under key.
	GetByKey(key string) (item T, exists bool, err error)
}

// IndexFunc computes the values an object is indexed under. An object may
// have none, one or many values for one index.
type IndexFunc[T Object] func(obj T) ([]string, error)

// Indexers maps an index name to its function.
type Indexers[T Object] map[string]IndexFunc[T]

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

// Writer is the mutating half of a store: what a reflector needs to keep a
// store (or a DeltaFIFO) in step with a server.
type Writer[T Object] interface {
	// Add inserts obj, or replaces the object stored under the same key.
	Add(obj T) error
	// Update replaces the object stored under obj's key, or inserts it.
	Update(obj T) error
	// Delete removes the object stored under obj's key, if any.
	Delete(obj T) error
	// Replace atomically swaps the whole content for items. resourceVersion
	// is the version the items were listed at.
	Replace(items []T, resourceVersion string) error
}

// Store is a keyed collection of objects, safe for concurrent use: a
// Writer plus reads. Returned objects are shared and must not be mutated.
// Indexer, ExpirationStore and UndeltaStore are Stores; an informer's
// cache is not (its readers get a Reader, which cannot write).
type Store[T Object] interface {
	Writer[T]
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

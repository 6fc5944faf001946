package cache

import (
	"errors"
	"fmt"
)

// Sentinel errors of this package, matched with errors.Is. Functions return
// them wrapped with detail (often in one of the typed errors below).
var (
	// ErrInvalidKey: a key is not one the key functions of this package
	// could have produced. The detail is a *KeyError.
	ErrInvalidKey = errors.New("invalid key")
	// ErrInvalidObject: an object cannot be stored: it is nil, or its name
	// is empty or contains '/'.
	ErrInvalidObject = errors.New("invalid object")
	// ErrWrongNamespace: an object is outside the namespace a store is
	// restricted to. The detail is a *NamespaceError.
	ErrWrongNamespace = errors.New("object in wrong namespace")
	// ErrIndexNotFound: a look-up named an index that is not registered.
	ErrIndexNotFound = errors.New("index not found")
	// ErrIndexExists: AddIndexers named an index that is already
	// registered.
	ErrIndexExists = errors.New("index already exists")
	// ErrIndexFunc: an index function failed. The detail is an
	// *IndexFuncError that also wraps the function's own error.
	ErrIndexFunc = errors.New("index function failed")
	// ErrClosed: the queue was closed. Pop returns it once Close was
	// called; writes to a closed queue return it too.
	ErrClosed = errors.New("queue closed")
	// ErrRequeue marks a process error as retryable. A process function
	// passed to Pop that returns an error wrapping ErrRequeue (for example
	// fmt.Errorf("conflict: %w", ErrRequeue)) makes the queue put the
	// popped item back; see DeltaFIFO.Pop and FIFO.Pop.
	ErrRequeue = errors.New("requeue")
	// ErrRelistEnded: a relist session was used after Finish or Abort.
	ErrRelistEnded = errors.New("relist already ended")
)

// KeyError reports a malformed key. It matches ErrInvalidKey.
type KeyError struct {
	// Key is the offending key.
	Key string
	// Reason says what is wrong with it.
	Reason string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("invalid key %q: %s", e.Key, e.Reason)
}

// Is reports whether target is ErrInvalidKey.
func (e *KeyError) Is(target error) bool { return target == ErrInvalidKey }

// NamespaceError reports an object outside the namespace a store is
// restricted to. It matches ErrWrongNamespace.
type NamespaceError struct {
	// Want is the namespace the store accepts; Got the object's.
	Want, Got string
	// Name is the object's name.
	Name string
}

func (e *NamespaceError) Error() string {
	return fmt.Sprintf("object %q is in namespace %q, store only accepts namespace %q", e.Name, e.Got, e.Want)
}

// Is reports whether target is ErrWrongNamespace.
func (e *NamespaceError) Is(target error) bool { return target == ErrWrongNamespace }

// IndexFuncError reports an index function that failed on the object stored
// (or about to be stored) under Key. It matches ErrIndexFunc and unwraps to
// the function's error.
type IndexFuncError struct {
	Index string
	Key   string
	Err   error
}

func (e *IndexFuncError) Error() string {
	return fmt.Sprintf("index %q failed on %q: %v", e.Index, e.Key, e.Err)
}

// Unwrap returns the index function's error.
func (e *IndexFuncError) Unwrap() error { return e.Err }

// Is reports whether target is ErrIndexFunc.
func (e *IndexFuncError) Is(target error) bool { return target == ErrIndexFunc }

// keyFuncError wraps the error of a key function with the operation that
// needed the key.
func keyFuncError(op string, err error) error {
	return fmt.Errorf("cache: %s: computing key: %w", op, err)
}

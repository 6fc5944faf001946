package kube

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
)

// Ref is one counted reference to an informer of a Factory, for informers
// that come and go while the others run: one per custom resource that may
// be uninstalled, per namespace opted in, per tenant. Acquire,
// AcquireDynamic and AcquireMetadata each hand out a new Ref; Release gives
// it back. While any Ref to an informer is held (or anyone got it from
// Informer, DynamicInformer or MetadataInformer, which hold it until
// Shutdown), the factory keeps it and every request for its Key gets the
// same informer. The last Release stops it, waits until every goroutine it
// started has exited (handlers finishing their current call included),
// and drops it from the factory, which then keeps no reference to it: its
// cache is freed once the caller drops the Ref and the informer. A later
// request for the same Key makes a new informer, listed afresh.
//
// An informer acquired after the factory's Start starts at once, under
// the context of the last Start; one acquired before runs from Start. The
// other informers of the factory are not touched either way.
//
// A Ref is safe for concurrent use. Release may be called more than once;
// only the first call counts.
type Ref[T cache.Object] struct {
	f   *Factory
	key Key
	e   *entry
	inf *informer.Shared[T]

	once sync.Once // the first Release
}

// Informer returns the referenced informer. After Release it is stopped
// (or about to be) and no longer the factory's: do not use it then.
func (r *Ref[T]) Informer() *informer.Shared[T] { return r.inf }

// Key returns the key of the referenced informer.
func (r *Ref[T]) Key() Key { return r.key }

// Release gives the reference back. When it was the informer's last
// reference (and nobody got it from Informer, DynamicInformer or
// MetadataInformer), Release stops the informer, blocks until every
// goroutine it started has exited, and drops it from the factory.
func (r *Ref[T]) Release() {
	r.once.Do(func() { r.f.release(r.key, r.e) })
}

// Acquire is Informer with a reference count: it returns a Ref to the
// factory's informer for the built-in resource served as T, creating it on
// first use, and starts it at once when the factory has been started.
// Release the Ref when done with it.
func Acquire[T cache.Object](f *Factory, opts InformerOptions[T]) (*Ref[T], error) {
	res, err := ResourceFor[T]()
	if err != nil {
		return nil, err
	}
	return acquire(f, SourceTyped, res, opts, typedSource[T](f))
}

// AcquireDynamic is DynamicInformer with a reference count (see Acquire and
// Ref): typically one Ref per custom resource, released when its
// definition is deleted.
func AcquireDynamic(f *Factory, res Resource, opts InformerOptions[*unstructured.Unstructured]) (*Ref[*unstructured.Unstructured], error) {
	return acquire(f, SourceDynamic, res, opts, dynamicSource(f, res))
}

// AcquireMetadata is MetadataInformer with a reference count (see Acquire
// and Ref).
func AcquireMetadata(f *Factory, res Resource, opts InformerOptions[*metav1.PartialObjectMetadata]) (*Ref[*metav1.PartialObjectMetadata], error) {
	return acquire(f, SourceMetadata, res, opts, metadataSource(f, res))
}

func acquire[T cache.Object](f *Factory, kind SourceKind, res Resource, opts InformerOptions[T],
	newSource sourceFunc[T]) (*Ref[T], error) {
	return acquireKey(f, Key{Source: kind, Resource: res}, opts, newSource)
}

// acquireKey is acquire with the key's source kind, resource and view in
// id (see informerForKey).
func acquireKey[T cache.Object](f *Factory, id Key, opts InformerOptions[T], newSource sourceFunc[T]) (*Ref[T], error) {
	ref := &Ref[T]{f: f}
	inf, _, err := informerForKey(f, id, opts, newSource, func(key Key, e *entry) {
		e.refs++
		ref.key, ref.e = key, e
		if f.runCtx != nil && !f.shutdown {
			f.startLocked(f.runCtx, key, e)
		}
	})
	if err != nil {
		return nil, err
	}
	ref.inf = inf
	return ref, nil
}

// release drops one reference to e, the entry of key; the last one stops
// its informer, waits for it, and forgets it.
func (f *Factory) release(key Key, e *entry) {
	f.mu.Lock()
	e.refs--
	if e.refs > 0 || e.pinned || f.informers[key] != e {
		f.mu.Unlock()
		return
	}
	delete(f.informers, key)
	cancel, done := e.cancel, e.done
	f.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

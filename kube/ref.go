package kube

import (
	"sync"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
)

// Ref is one counted reference to an informer of a Factory, for informers
// that come and go while the others run: one per custom resource that may
// be uninstalled, per namespace opted in, per tenant. Acquire hands out a
// new Ref; Release gives it back. While any Ref to an informer is held (or
// anyone got it from Informer, which holds it until Shutdown), the factory
// keeps it and every request for its Key gets the same informer. The last
// Release stops it, waits until every goroutine it started has exited
// (handlers finishing their current call included), and drops it from the
// factory, which then keeps no reference to it: its cache is freed once
// the caller drops the Ref and the informer. A later request for the same
// Key makes a new informer, listed afresh.
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
// reference (and nobody got it from Informer), Release stops the
// informer, blocks until every goroutine it started has exited, and drops
// it from the factory.
func (r *Ref[T]) Release() {
	r.once.Do(func() { r.f.release(r.key, r.e) })
}

// acquire is Acquire once the kind is known: it holds a new reference to
// the informer of T that opts name, starting it at once when the factory
// has been started.
func acquire[T cache.Object](f *Factory, k kind[T], opts InformerOptions[T]) (*Ref[T], error) {
	ref := &Ref[T]{f: f}
	inf, _, err := informerFor(f, k, opts, func(key Key, e *entry) {
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

// Package workqueue is a typed, rate-limited priority work queue for
// controllers.
//
// Producers (usually informer event handlers) Add the key of an object that
// changed; workers loop on Get, reconcile the key, and call Done. The queue
// guarantees what level-driven controllers rely on: an item waiting in the
// queue is held once however often it is added, no item is held by two
// workers at once, and an item added while a worker holds it is handed out
// again after that worker's Done — so every add is followed by at least one
// round of processing.
//
// Items carry a priority, an int, higher first (AddWithOptions; Add is
// PriorityNormal); among equals they are handed out in the order they
// started waiting. An add at a higher priority raises an item that already
// waits. [NewEnqueue] builds the informer handler a controller usually
// needs: it queues the objects of an informer's initial list (and resyncs)
// at PriorityLow and real changes at PriorityNormal, so that after a
// restart a change is reconciled within one reconcile's time instead of
// after the whole cluster's backlog.
//
// A worker that fails retries with AddRateLimited, whose delay comes from a
// [RateLimiter] (per-item exponential back-off, an overall token bucket, or
// the maximum of several), and calls Forget once the item succeeds. A
// retry keeps the priority the item was handed out at.
//
// A typical worker:
//
//	for {
//		key, err := q.Get(ctx)
//		if err != nil {
//			return // ErrShutDown or ctx.Err()
//		}
//		if err := reconcile(ctx, key); err != nil {
//			q.AddRateLimited(key)
//		} else {
//			q.Forget(key)
//		}
//		q.Done(key)
//	}
//
// Time is read from an injected clock (Options.Clock), so tests can drive
// delays and back-off without sleeping. Measurements (depth and wait by
// priority, the age of the oldest waiting item, work time, retries) go to a
// metrics.WorkqueueProvider when one is given.
package workqueue

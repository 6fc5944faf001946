package informer

import (
	"context"
	"fmt"
	"time"
)

// resyncLoop is the informer's resync timer: once the cache has synced,
// every period it marks the handlers whose own period has come
// (shouldResync) and, if any has, asks the delta queue for a Sync delta of
// every cached object not already queued. The pop loop hands those only to
// the marked handlers. It never talks to the source. It returns when ctx
// is done.
func (inf *Shared[T]) resyncLoop(ctx context.Context, period time.Duration) {
	select {
	case <-ctx.Done():
		return
	case <-inf.syncedCh:
	}
	t := inf.clock.NewTimer(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if inf.shouldResync() {
			if err := inf.fifo.Resync(); err != nil {
				inf.report(fmt.Errorf("informer %s: resync: %w", inf.name, err))
			}
		}
		t.Reset(period)
	}
}

package informer

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"
)

// resyncer is an informer's resync timer, a stage of its pipeline: once
// the cache has synced, every period it asks due whether a resync is due
// (a shared informer marks the handlers whose own period has come; nil
// means always) and, if so, asks the delta queue for a Sync delta of every
// cached object not already queued. The cache writer hands those out as
// unchanged updates. It never talks to the source.
type resyncer struct {
	name   string // the informer's
	period time.Duration
	clock  clock.WithTicker
	synced <-chan struct{}
	due    func() bool
	queue  interface{ Resync() error }
	report func(error)
}

// run resyncs until ctx is done.
func (r resyncer) run(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-r.synced:
	}
	t := r.clock.NewTimer(r.period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if r.due == nil || r.due() {
			if err := r.queue.Resync(); err != nil {
				r.report(fmt.Errorf("informer %s: resync: %w", r.name, err))
			}
		}
		t.Reset(r.period)
	}
}

package reflector

import (
	"context"
	"fmt"

	"github.com/kinformer/kinformer/listwatch"
)

// resumeFrom is the stateResume step: the store gets Options.Resume's
// objects, and the reflector watches from its version, which the watch
// step then has the server confirm (confirmResume).
func (r *Reflector[T]) resumeFrom(ctx context.Context) state[T] {
	res := r.resume
	r.resume = nil // its objects belong to the store now
	if _, err := r.replace(r.withoutNil(res.Items), res.ResourceVersion); err != nil {
		r.report(listwatch.PhaseList, fmt.Errorf("resume at %s: %w", res.ResourceVersion, err))
		return state[T]{kind: stateList}
	}
	r.setLastRV(res.ResourceVersion)
	r.resuming = true
	return state[T]{kind: stateWatch}
}

// confirmResume runs once a watch from the resumed version has opened:
// a list of one object at exactly that version tells whether the server
// still has it (an apiserver without a watch cache opens the watch and
// only then sends "expired"). It returns the state to go to instead of
// reading the watch, or ok.
func (r *Reflector[T]) confirmResume(ctx context.Context) (next state[T], ok bool) {
	rv := r.LastSyncResourceVersion()
	_, err := r.src.List(ctx, listwatch.Options{ResourceVersion: rv, ResourceVersionMatch: listwatch.MatchExact, Limit: 1})
	switch {
	case err == nil:
		r.resuming = false
		r.confirm()
		return state[T]{}, true
	case ctx.Err() != nil:
		return state[T]{kind: stateWatch}, false
	}
	r.answered(err)
	r.report(listwatch.PhaseWatchStart, fmt.Errorf("confirm resumed version %s: %w", rv, err))
	if versionUnavailable(err) {
		return state[T]{kind: stateList}, false // relist now: the store tells the differences
	}
	return state[T]{kind: stateWatch, backoff: true}, false
}

// confirm calls Options.Confirmed, once.
func (r *Reflector[T]) confirm() {
	if r.confirmed != nil {
		r.confirmed()
		r.confirmed = nil
	}
}

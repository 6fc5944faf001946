package reflector

import (
	"context"
	"errors"
	"fmt"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
)

// resumeFrom is the stateResume step: load Options.Resume's state (once),
// have the server confirm its version, and only then read its objects and
// hand them to the store (see Options.Resume for each answer).
func (r *Reflector[T]) resumeFrom(ctx context.Context) state[T] {
	if r.resume == nil {
		res, err := r.load(ctx)
		switch {
		case ctx.Err() != nil:
			return state[T]{kind: stateResume}
		case err != nil:
			r.report(listwatch.PhaseList, fmt.Errorf("resume: %w", err))
			return state[T]{kind: stateResume, backoff: true}
		case res == nil:
			r.load = nil
			return state[T]{kind: stateList}
		case res.ResourceVersion == "" || res.Items == nil:
			r.load = nil
			r.report(listwatch.PhaseList, fmt.Errorf("resume: %w", ErrMissingResourceVersion))
			done(res)
			return state[T]{kind: stateList}
		}
		r.resume = res
	}
	rv := r.resume.ResourceVersion
	_, err := r.src.List(ctx, listwatch.Options{ResourceVersion: rv, ResourceVersionMatch: listwatch.MatchExact, Limit: 1})
	if ctx.Err() != nil {
		return state[T]{kind: stateResume}
	}
	r.answered(err)
	switch {
	case err == nil:
		res := r.takeResume()
		items, ok := res.Items(ctx, false)
		defer done(res)
		if !ok || !r.fill(items, rv) {
			return state[T]{kind: stateList}
		}
		r.confirm()
		return state[T]{kind: stateWatch}
	case errors.Is(err, listwatch.ErrTooLargeResourceVersion):
		done(r.takeResume())
		r.report(listwatch.PhaseList, fmt.Errorf("resume at %s: %w: %w", rv, ErrResumeRefused, err))
		return state[T]{kind: stateList}
	case errors.Is(err, listwatch.ErrExpired):
		r.report(listwatch.PhaseList, fmt.Errorf("resume at %s, relisting: %w", rv, err))
		r.readBehind(ctx, r.takeResume())
		r.rvUnavailable = true // the relist is a consistent read
		return state[T]{kind: stateList}
	}
	r.report(listwatch.PhaseList, fmt.Errorf("confirm resumed version %s: %w", rv, err))
	return state[T]{kind: stateResume, backoff: true}
}

// takeResume returns the state under question, which the loop then no
// longer holds.
func (r *Reflector[T]) takeResume() *Resume[T] {
	res := r.resume
	r.resume, r.load = nil, nil
	return res
}

// done calls res.Done, if set.
func done[T cache.Object](res *Resume[T]) {
	if res != nil && res.Done != nil {
		res.Done()
	}
}

// fill hands a state's objects, at rv, to the store; they belong to the
// store from then on. false if the store refused them.
func (r *Reflector[T]) fill(items []T, rv string) bool {
	if _, err := r.replace(r.withoutNil(items), rv); err != nil {
		r.report(listwatch.PhaseList, fmt.Errorf("resume at %s: %w", rv, err))
		return false
	}
	r.setLastRV(rv)
	return true
}

// behind is a state whose version expired, read by its Items on a
// goroutine of its own (readBehind) while the reflector relists: the
// relist waits for it before anything reaches the store (see
// Options.Resume).
type behind[T cache.Object] struct {
	res *Resume[T]
	// read is sent the state's objects (ok false: none to use) by the
	// goroutine reading it, once; buffered, so it never blocks.
	read chan behindRead[T]
}

type behindRead[T any] struct {
	items []T
	ok    bool
}

// readBehind starts reading res on a goroutine of its own, owned by the
// list-watch loop: it ends when Items returns (soon after ctx is done),
// and the loop waits for it (applyBehind, or dropBehind on its way out).
func (r *Reflector[T]) readBehind(ctx context.Context, res *Resume[T]) {
	b := &behind[T]{res: res, read: make(chan behindRead[T], 1)}
	go func() {
		items, ok := res.Items(ctx, true)
		b.read <- behindRead[T]{items, ok}
	}()
	r.behind = b
}

// applyBehind is the start of the first relist to finish after an expired
// resume: it waits for the state being read and fills the store with it,
// so that the relist applied next is its differences. It returns the
// state, for done once the relist is applied; nil without one.
func (r *Reflector[T]) applyBehind() *Resume[T] {
	b := r.behind
	if b == nil {
		return nil
	}
	r.behind = nil
	if got := <-b.read; got.ok {
		r.fill(got.items, b.res.ResourceVersion)
	}
	return b.res
}

// dropBehind waits for a state still being read when the loop ends.
func (r *Reflector[T]) dropBehind() {
	if b := r.behind; b != nil {
		r.behind = nil
		<-b.read
		done(b.res)
	}
}

// confirm calls Options.Confirmed, once.
func (r *Reflector[T]) confirm() {
	if r.confirmed != nil {
		r.confirmed()
		r.confirmed = nil
	}
}

package reflector

import (
	"context"
	"errors"
	"fmt"

	"github.com/kinformer/kinformer/listwatch"
)

// resumeFrom is the stateResume step: load Options.Resume's state (once),
// have the server confirm its version, and only then hand it to the store
// (see Options.Resume for each answer).
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
		case res.ResourceVersion == "":
			r.load = nil
			r.report(listwatch.PhaseList, fmt.Errorf("resume: %w", ErrMissingResourceVersion))
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
		if !r.fillFromResume() {
			return state[T]{kind: stateList}
		}
		r.confirm()
		return state[T]{kind: stateWatch}
	case errors.Is(err, listwatch.ErrTooLargeResourceVersion):
		r.resume, r.load = nil, nil
		r.report(listwatch.PhaseList, fmt.Errorf("resume at %s: %w: %w", rv, ErrResumeRefused, err))
		return state[T]{kind: stateList}
	case errors.Is(err, listwatch.ErrExpired):
		r.rvUnavailable = true // the relist is a consistent read
		if r.resume.SkipExpired {
			r.resume, r.load = nil, nil
			r.report(listwatch.PhaseList, fmt.Errorf("resume at %s, relisting without it: %w", rv, err))
			return state[T]{kind: stateList}
		}
		r.report(listwatch.PhaseList, fmt.Errorf("resume at %s, relisting: %w", rv, err))
		r.fillFromResume()
		return state[T]{kind: stateList}
	}
	r.report(listwatch.PhaseList, fmt.Errorf("confirm resumed version %s: %w", rv, err))
	return state[T]{kind: stateResume, backoff: true}
}

// fillFromResume reads the confirmed (or expired) state and hands it to
// the store; its objects belong to the store from then on. false if it
// could not be read or the store refused it.
func (r *Reflector[T]) fillFromResume() bool {
	res := r.resume
	r.resume, r.load = nil, nil
	items := res.Items
	if res.Read != nil {
		var err error
		if items, err = res.Read(); err != nil {
			r.report(listwatch.PhaseList, fmt.Errorf("resume at %s: %w", res.ResourceVersion, err))
			return false
		}
	}
	if _, err := r.replace(r.withoutNil(items), res.ResourceVersion); err != nil {
		r.report(listwatch.PhaseList, fmt.Errorf("resume at %s: %w", res.ResourceVersion, err))
		return false
	}
	r.setLastRV(res.ResourceVersion)
	return true
}

// confirm calls Options.Confirmed, once.
func (r *Reflector[T]) confirm() {
	if r.confirmed != nil {
		r.confirmed()
		r.confirmed = nil
	}
}

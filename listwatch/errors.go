package listwatch

import (
	"errors"
	"fmt"
)

// Errors a source reports, matched with errors.Is. Sources wrap them with
// detail; the reflector decides what to do from them.
var (
	// ErrExpired: the requested resource version (or continue token) is
	// older than the server keeps (HTTP 410 Gone, reason Expired or Gone).
	ErrExpired = errors.New("resource version expired")
	// ErrTooLargeResourceVersion: the requested resource version is newer
	// than the server has seen (its cache has not caught up yet).
	ErrTooLargeResourceVersion = errors.New("too large resource version")
	// ErrUnavailable: the server could not be reached (connection refused,
	// reset, or the server said it is not ready).
	ErrUnavailable = errors.New("server unavailable")
	// ErrStreamingListUnsupported: the source cannot serve a list as a
	// watch stream (Options.SendInitialEvents); use a plain list instead.
	ErrStreamingListUnsupported = errors.New("streaming list not supported")
)

// Phase names the step of list-and-watch that failed.
type Phase string

const (
	PhaseList        Phase = "list"
	PhaseWatchStart  Phase = "watch start"
	PhaseWatchStream Phase = "watch stream"
)

// PhaseError is an error tagged with the phase it happened in.
type PhaseError struct {
	Phase Phase
	Err   error
}

func (e *PhaseError) Error() string { return fmt.Sprintf("%s: %v", e.Phase, e.Err) }

func (e *PhaseError) Unwrap() error { return e.Err }

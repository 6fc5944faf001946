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
	// ErrWrongType: the stream carried an object the source could not turn
	// into T. Watch.Next reports it as a *DecodeError; the stream stays
	// usable and the caller may call Next again.
	ErrWrongType = errors.New("object of the wrong type")
)

// DecodeError is what Watch.Next returns for one event whose object could
// not be decoded into T. It matches ErrWrongType with errors.Is. Unlike
// every other error from Next, it does not end the stream: the offending
// event is lost, the next call to Next reads the event after it.
type DecodeError struct {
	// Type is the event's type as the source read it.
	Type EventType
	// Got describes what the event carried (a Go type or API kind).
	Got string
	// Err is the decoder's error, if any.
	Err error
}

func (e *DecodeError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s event carried %s: %v: %v", e.Type, e.Got, ErrWrongType, e.Err)
	}
	return fmt.Sprintf("%s event carried %s: %v", e.Type, e.Got, ErrWrongType)
}

// Is reports whether target is ErrWrongType.
func (e *DecodeError) Is(target error) bool { return target == ErrWrongType }

func (e *DecodeError) Unwrap() error { return e.Err }

// Phase names the step of list-and-watch that failed.
type Phase string

const (
	PhaseList        Phase = "list"
	PhaseWatchStart  Phase = "watch start"
	PhaseWatchStream Phase = "watch stream"
	// PhaseResync is the periodic resync of a store, which never talks to
	// the server; only the store can fail it.
	PhaseResync Phase = "resync"
)

// PhaseError is an error tagged with the phase it happened in.
type PhaseError struct {
	Phase Phase
	Err   error
}

func (e *PhaseError) Error() string { return fmt.Sprintf("%s: %v", e.Phase, e.Err) }

func (e *PhaseError) Unwrap() error { return e.Err }

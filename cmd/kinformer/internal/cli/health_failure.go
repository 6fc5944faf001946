package cli

import (
	"errors"
	"fmt"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/reflector"
)

// failureKind sorts informer errors by what a person should be told.
type failureKind int

const (
	failOther       failureKind = iota // the server answered with an error
	failUnreachable                    // nothing answered, or the server is not ready
	failExpired                        // 410 Gone: relist
	failWarning                        // one object or one handler call; nothing stopped
	failGone                           // 404: the server no longer has the resource type
)

type failure struct {
	kind  failureKind
	phase listwatch.Phase
	// text is the short reason, without the informer's name or the URL.
	text string
	// answered: the error came from a running server (an API status).
	answered bool
}

func classifyFailure(err error) failure {
	f := failure{}
	var pe *listwatch.PhaseError
	if errors.As(err, &pe) {
		f.phase = pe.Phase
	}
	var panicErr *informer.HandlerPanicError
	switch {
	case errors.As(err, &panicErr):
		f.kind, f.text = failWarning, fmt.Sprintf("handler panicked: %v", panicErr.Value)
	case errors.Is(err, listwatch.ErrWrongType):
		f.kind, f.text = failWarning, "skipped an object: "+innerMessage(err)
	case errors.Is(err, reflector.ErrInitialEventsTimeout), errors.Is(err, reflector.ErrWatchStalled):
		// Said once: the reflector has already fallen back or restarted.
		f.kind, f.text = failWarning, innerMessage(err)
	case errors.Is(err, listwatch.ErrExpired):
		f.kind = failExpired
	case apierrors.IsNotFound(err):
		// A list or watch of a collection finds nothing at its path: the
		// type is gone (a custom resource's definition deleted), as kubectl
		// says of a type the server does not have.
		f.kind, f.answered = failGone, true
	case errors.Is(err, listwatch.ErrUnavailable), unreachable(err):
		f.kind, f.text = failUnreachable, unreachableCause(err)
	default:
		var status apierrors.APIStatus
		f.text, f.answered = innerMessage(err), errors.As(err, &status)
	}
	return f
}

// unreachableCause is why nothing answered, in a few words.
func unreachableCause(err error) string {
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &status):
		return "not ready: " + serverMessage(err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to host"
	}
	return rootCause(err)
}

// innerMessage is err's message without the informer name and phase the
// reflector puts in front, and the server's message alone for API errors.
func innerMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return serverMessage(err)
	}
	var pe *listwatch.PhaseError
	if errors.As(err, &pe) && pe.Err != nil {
		return pe.Err.Error()
	}
	return err.Error()
}

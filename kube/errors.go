package kube

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kinformer/kinformer/listwatch"
)

// ErrMalformed is wrapped by the error of a response that does not decode
// (a truncated or corrupt frame, an undecodable object, invalid JSON). On a
// watch it is final: every later Next returns the same error. An object that
// decodes but is of another kind than the source serves is reported as a
// *listwatch.DecodeError (errors.Is(err, listwatch.ErrWrongType)) instead,
// and only that event is skipped.
var ErrMalformed = errors.New("malformed response")

// mapError maps a failure of a request onto the listwatch errors. The result
// wraps both the listwatch error (errors.Is) and the original error
// (errors.As finds an *apierrors.StatusError with its code and message). An
// error that fits no listwatch error is returned unchanged. nil stays nil.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	if sentinel := classify(err); sentinel != nil && !errors.Is(err, sentinel) {
		return fmt.Errorf("%w: %w", sentinel, err)
	}
	return err
}

// classify returns the listwatch error err means, or nil.
func classify(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return classifyStatus(status.Status())
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err),
		utilnet.IsHTTP2ConnectionLost(err):
		return listwatch.ErrUnavailable
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		// No route, host down, DNS failure while dialing: nothing answered.
		return listwatch.ErrUnavailable
	}
	return nil
}

// classifyStatus returns the listwatch error a server's Status means, or nil.
func classifyStatus(s metav1.Status) error {
	switch {
	case s.Code == http.StatusGone, s.Reason == metav1.StatusReasonExpired,
		s.Reason == metav1.StatusReasonGone:
		return listwatch.ErrExpired
	case isTooLargeResourceVersion(s):
		return listwatch.ErrTooLargeResourceVersion
	case s.Code == http.StatusServiceUnavailable, s.Reason == metav1.StatusReasonServiceUnavailable:
		return listwatch.ErrUnavailable
	}
	return nil
}

// isTooLargeResourceVersion reports whether the server said the requested
// resource version is newer than anything it has: current servers set the
// cause ResourceVersionTooLarge on a 504 Timeout; servers before 1.18.6 only
// said so in the message.
func isTooLargeResourceVersion(s metav1.Status) bool {
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Type == metav1.CauseTypeResourceVersionTooLarge || c.Message == "Too large resource version" {
				return true
			}
		}
	}
	return s.Reason == metav1.StatusReasonTimeout && containsFold(s.Message, "too large resource version")
}

// statusError turns a Status the server sent (a failed response or a watch
// ERROR event) into a mapped error.
func statusError(s *metav1.Status) error {
	if s.Status == "" {
		s.Status = metav1.StatusFailure
	}
	return mapError(&apierrors.StatusError{ErrStatus: *s})
}

// streamingRejected reports whether err is a server's refusal of
// sendInitialEvents (servers without the WatchList feature answer 422
// Invalid, or 400, naming the parameter).
func streamingRejected(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	if s.Code != http.StatusUnprocessableEntity && s.Code != http.StatusBadRequest {
		return false
	}
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if containsFold(c.Field, "sendInitialEvents") {
				return true
			}
		}
	}
	return containsFold(s.Message, "sendInitialEvents")
}

// containsFold reports whether s contains sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// MapError maps the failure of a request to a kube-apiserver onto the
// listwatch errors, as this package's sources do: the result wraps the
// listwatch error the reflector acts on (ErrExpired, ErrUnavailable, ...)
// and err itself, so errors.As still finds the server's
// *apierrors.StatusError. An error that fits none comes back unchanged;
// nil stays nil. It is for sources written outside this package (the
// kinformer command's Table source is one) that should fail the same way.
func MapError(err error) error { return mapError(err) }

// WatchResponseError is the error of a watch request the server answered
// with a status other than 200 (body is what was read of the response):
// the server's Status when the body holds one (protobuf or JSON), else the
// HTTP status and the body's text, mapped as MapError maps it. With
// streaming set (the request asked for sendInitialEvents), a server that
// refuses the parameter gives an error wrapping
// listwatch.ErrStreamingListUnsupported, after which the reflector lists
// instead.
func WatchResponseError(resp *http.Response, body []byte, streaming bool) error {
	err := responseError(resp, body)
	if streaming && streamingRejected(err) {
		return fmt.Errorf("%w: %w", listwatch.ErrStreamingListUnsupported, err)
	}
	return mapError(err)
}

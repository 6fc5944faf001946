package listquery

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kinformer/kinformer/internal/wire"
	"github.com/kinformer/kinformer/listwatch"
)

// MapError maps the failure of a request to a kube-apiserver onto the
// listwatch errors the reflector acts on. The result wraps both the
// listwatch error (errors.Is) and the original error (errors.As finds an
// *apierrors.StatusError with its code and message). An error that fits no
// listwatch error is returned unchanged. nil stays nil.
func MapError(err error) error {
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

// StatusError turns a Status the server sent (a failed response or a watch
// ERROR event) into a mapped error.
func StatusError(s *metav1.Status) error {
	if s.Status == "" {
		s.Status = metav1.StatusFailure
	}
	return MapError(&apierrors.StatusError{ErrStatus: *s})
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

// watchResponseError is the error of a watch request the server answered
// with a status other than 200 (body is what was read of the response):
// the server's Status when the body holds one (protobuf or JSON), else the
// HTTP status and the body's text, mapped as MapError maps it. With
// streaming set (the request asked for sendInitialEvents), a server that
// refuses the parameter gives an error wrapping
// listwatch.ErrStreamingListUnsupported, after which the reflector lists
// instead.
func watchResponseError(resp *http.Response, body []byte, streaming bool) error {
	err := responseError(resp, body)
	if streaming && streamingRejected(err) {
		return fmt.Errorf("%w: %w", listwatch.ErrStreamingListUnsupported, err)
	}
	return MapError(err)
}

// responseError builds the error of a failed response: the server's Status
// when the body holds one (protobuf or JSON), otherwise a generic error
// with the HTTP status and the body's text.
func responseError(resp *http.Response, body []byte) error {
	if st, ok := decodeStatus(body); ok {
		if st.Code == 0 {
			st.Code = int32(resp.StatusCode)
		}
		if st.Status == "" {
			st.Status = metav1.StatusFailure
		}
		return &apierrors.StatusError{ErrStatus: *st}
	}
	retryAfter, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	msg := strings.TrimSpace(Truncate(body))
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return apierrors.NewGenericServerResponse(resp.StatusCode, http.MethodGet, schema.GroupResource{}, "", msg, retryAfter, true)
}

// decodeStatus decodes a metav1.Status from a response body.
func decodeStatus(body []byte) (*metav1.Status, bool) {
	st := &metav1.Status{}
	if bytes.HasPrefix(body, wire.Magic) {
		env, err := wire.ParseEnvelope(body)
		if err != nil || string(env.Kind) != "Status" || st.Unmarshal(env.Raw) != nil {
			return nil, false
		}
		return st, true
	}
	if err := json.Unmarshal(body, st); err != nil || st.Kind != "Status" {
		return nil, false
	}
	return st, true
}

// Truncate shortens b for an error message.
func Truncate(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

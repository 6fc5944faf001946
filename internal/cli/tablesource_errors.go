package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kinformer/kinformer/listwatch"
)

// The Table source reports failures the way package kube's sources do (its
// mapping is unexported): the listwatch error the reflector acts on, wrapped
// together with the server's *apierrors.StatusError, which errors.As finds.

// mapSourceError maps a failed request onto the listwatch errors; an error
// that fits none comes back unchanged.
func mapSourceError(err error) error {
	if err == nil {
		return nil
	}
	if sentinel := classifySourceError(err); sentinel != nil && !errors.Is(err, sentinel) {
		return fmt.Errorf("%w: %w", sentinel, err)
	}
	return err
}

func classifySourceError(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		switch {
		case s.Code == http.StatusGone, s.Reason == metav1.StatusReasonExpired, s.Reason == metav1.StatusReasonGone:
			return listwatch.ErrExpired
		case tooLargeResourceVersion(s):
			return listwatch.ErrTooLargeResourceVersion
		case s.Code == http.StatusServiceUnavailable, s.Reason == metav1.StatusReasonServiceUnavailable:
			return listwatch.ErrUnavailable
		}
		return nil
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsHTTP2ConnectionLost(err):
		return listwatch.ErrUnavailable
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return listwatch.ErrUnavailable
	}
	return nil
}

func tooLargeResourceVersion(s metav1.Status) bool {
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Type == metav1.CauseTypeResourceVersionTooLarge {
				return true
			}
		}
	}
	return s.Reason == metav1.StatusReasonTimeout && strings.Contains(strings.ToLower(s.Message), "too large resource version")
}

// responseError is the error of a failed watch response: the server's
// Status when the body holds one, otherwise the HTTP status and body text.
func responseError(code int, body []byte) error {
	st := &metav1.Status{}
	if err := json.Unmarshal(body, st); err == nil && st.Kind == "Status" {
		if st.Code == 0 {
			st.Code = int32(code)
		}
		if st.Status == "" {
			st.Status = metav1.StatusFailure
		}
		return &apierrors.StatusError{ErrStatus: *st}
	}
	msg := strings.TrimSpace(string(body[:min(len(body), 512)]))
	if msg == "" {
		msg = http.StatusText(code)
	}
	return apierrors.NewGenericServerResponse(code, http.MethodGet, schema.GroupResource{}, "", msg, 0, true)
}

// streamingRejected reports whether err is a server's refusal of
// sendInitialEvents.
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
			if strings.Contains(strings.ToLower(c.Field), "sendinitialevents") {
				return true
			}
		}
	}
	return strings.Contains(strings.ToLower(s.Message), "sendinitialevents")
}

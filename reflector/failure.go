package reflector

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
)

// failureReason sorts a failed request into the metrics.Failure* reasons:
// a few words a person can act on, from a small fixed set (a label value).
func failureReason(err error) string {
	var status apierrors.APIStatus
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return metrics.FailureConnectionRefused
	case errors.Is(err, syscall.ECONNRESET):
		return metrics.FailureConnectionReset
	case errors.Is(err, listwatch.ErrExpired):
		return metrics.FailureExpired
	case errors.Is(err, listwatch.ErrTooLargeResourceVersion):
		return metrics.FailureTooLargeVersion
	case errors.As(err, &status):
		s := status.Status()
		switch {
		case strings.Contains(s.Message, "shutting down"):
			return metrics.FailureShuttingDown
		case s.Code == http.StatusServiceUnavailable:
			return metrics.FailureUnavailable
		case s.Code == http.StatusTooManyRequests:
			return metrics.FailureThrottled
		case s.Code == http.StatusUnauthorized, s.Code == http.StatusForbidden:
			return metrics.FailureDenied
		case s.Code == http.StatusGatewayTimeout, s.Code == http.StatusRequestTimeout:
			return metrics.FailureTimeout
		case s.Code >= 500:
			return metrics.FailureServerError
		}
		return metrics.FailureOther
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return metrics.FailureTimeout
	case errors.Is(err, listwatch.ErrUnavailable):
		return metrics.FailureUnreachable
	}
	return metrics.FailureOther
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

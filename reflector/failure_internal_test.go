package reflector

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
)

func TestFailureReasons(t *testing.T) {
	dial := func(errno syscall.Errno) error {
		return fmt.Errorf("%w: %w", listwatch.ErrUnavailable,
			&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)})
	}
	gr := schema.GroupResource{Resource: "pods"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{dial(syscall.ECONNREFUSED), metrics.FailureConnectionRefused},
		{dial(syscall.ECONNRESET), metrics.FailureConnectionReset},
		{dial(syscall.EHOSTUNREACH), metrics.FailureUnreachable},
		{fmt.Errorf("%w: %w", listwatch.ErrUnavailable, apierrors.NewServiceUnavailable("apiserver is shutting down")), metrics.FailureShuttingDown},
		{fmt.Errorf("%w: %w", listwatch.ErrUnavailable, apierrors.NewServiceUnavailable("not ready")), metrics.FailureUnavailable},
		{apierrors.NewTooManyRequests("slow down", 1), metrics.FailureThrottled},
		{apierrors.NewForbidden(gr, "", errors.New("no")), metrics.FailureDenied},
		{apierrors.NewUnauthorized("who"), metrics.FailureDenied},
		{apierrors.NewInternalError(errors.New("boom")), metrics.FailureServerError},
		{apierrors.NewTimeoutError("slow", 1), metrics.FailureTimeout},
		{fmt.Errorf("%w: %w", listwatch.ErrExpired, apierrors.NewGone("too old")), metrics.FailureExpired},
		{listwatch.ErrTooLargeResourceVersion, metrics.FailureTooLargeVersion},
		{context.DeadlineExceeded, metrics.FailureTimeout},
		{apierrors.NewBadRequest("no"), metrics.FailureOther},
		{errors.New("garbled body"), metrics.FailureOther},
	} {
		if got := failureReason(c.err); got != c.want {
			t.Errorf("failureReason(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

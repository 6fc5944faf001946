package listquery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/listwatch"
)

func TestMapErrorTable(t *testing.T) {
	status := func(code int32, reason metav1.StatusReason, msg string, causes ...metav1.StatusCause) error {
		st := metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}
		if causes != nil {
			st.Details = &metav1.StatusDetails{Causes: causes}
		}
		return &apierrors.StatusError{ErrStatus: st}
	}
	dial := func(errno syscall.Errno) error {
		return &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/api/v1/pods", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &os.SyscallError{Syscall: "connect", Err: errno}}}
	}
	tests := []struct {
		name string
		err  error
		want error // nil: no listwatch error
	}{
		{"410 expired", status(410, metav1.StatusReasonExpired, "too old resource version: 5 (10)"), listwatch.ErrExpired},
		{"410 gone", status(410, metav1.StatusReasonGone, "gone"), listwatch.ErrExpired},
		{"410 without reason", status(410, "", "gone"), listwatch.ErrExpired},
		{"expired reason on 200", status(200, metav1.StatusReasonExpired, "continue token expired"), listwatch.ErrExpired},
		{"too large rv cause", status(504, metav1.StatusReasonTimeout, "Timeout: Too large resource version: 20, current: 10",
			metav1.StatusCause{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}), listwatch.ErrTooLargeResourceVersion},
		{"too large rv old message cause", status(504, metav1.StatusReasonTimeout, "timeout",
			metav1.StatusCause{Message: "Too large resource version"}), listwatch.ErrTooLargeResourceVersion},
		{"too large rv message only", status(504, metav1.StatusReasonTimeout, "Too large resource version: 20, current: 10"), listwatch.ErrTooLargeResourceVersion},
		{"plain 504 timeout", status(504, metav1.StatusReasonTimeout, "request timed out"), nil},
		{"503", status(503, metav1.StatusReasonServiceUnavailable, "apiserver not ready"), listwatch.ErrUnavailable},
		{"connection refused", dial(syscall.ECONNREFUSED), listwatch.ErrUnavailable},
		{"connection reset", &url.Error{Op: "Get", URL: "x", Err: &net.OpError{Op: "read", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}}, listwatch.ErrUnavailable},
		{"dial timeout", &url.Error{Op: "Get", URL: "x", Err: &net.OpError{Op: "dial", Err: errors.New("i/o timeout")}}, listwatch.ErrUnavailable},
		{"http2 lost", errors.New("http2: client connection lost"), listwatch.ErrUnavailable},
		{"403", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("RBAC says no")), nil},
		{"404", apierrors.NewNotFound(schema.GroupResource{Resource: "widgets"}, ""), nil},
		{"500", status(500, metav1.StatusReasonInternalError, "etcd exploded"), nil},
		{"canceled", context.Canceled, nil},
		{"other", io.ErrClosedPipe, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MapError(tt.err)
			for _, sentinel := range []error{listwatch.ErrExpired, listwatch.ErrTooLargeResourceVersion, listwatch.ErrUnavailable} {
				if is := errors.Is(got, sentinel); is != (sentinel == tt.want) {
					t.Errorf("errors.Is(%v, %v) = %v", got, sentinel, is)
				}
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("mapped error %v does not wrap the original", got)
			}
			if msg := tt.err.Error(); !containsFold(got.Error(), msg) {
				t.Errorf("message %q lost the original %q", got, msg)
			}
			var in, out *apierrors.StatusError
			if errors.As(tt.err, &in) && (!errors.As(got, &out) || out.ErrStatus.Code != in.ErrStatus.Code) {
				t.Errorf("status lost: %v", got)
			}
		})
	}
	if MapError(nil) != nil {
		t.Error("MapError(nil) != nil")
	}
}

func TestMapErrorDoesNotWrapTwice(t *testing.T) {
	once := MapError(apierrors.NewResourceExpired("old"))
	twice := MapError(once)
	if twice != once {
		t.Fatalf("mapping twice changed the error: %v", twice)
	}
	if got, want := once.Error(), fmt.Sprintf("%v: %v", listwatch.ErrExpired, "old"); got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
}

func TestStreamingRejected(t *testing.T) {
	forbidden := &apierrors.StatusError{ErrStatus: metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid,
		Message: `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden`}}
	if !streamingRejected(forbidden) {
		t.Error("422 naming sendInitialEvents not recognised")
	}
	other := &apierrors.StatusError{ErrStatus: metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid, Message: "labelSelector: Invalid value"}}
	if streamingRejected(other) {
		t.Error("unrelated 422 taken for a streaming-list rejection")
	}
	if streamingRejected(errors.New("sendInitialEvents")) {
		t.Error("non-status error taken for a streaming-list rejection")
	}
}

func TestWatchResponseErrorKeepsTheServersStatus(t *testing.T) {
	resp := func(code int) *http.Response { return &http.Response{StatusCode: code, Header: http.Header{}} }
	gone := []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old resource version: 5 (77)"}`)
	rejected := []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422,"message":"sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"}`)
	for _, tc := range []struct {
		name      string
		code      int
		body      []byte
		streaming bool
		want      error
		wantCode  int32
	}{
		{"expired", 410, gone, false, listwatch.ErrExpired, 410},
		{"streaming refused", 422, rejected, true, listwatch.ErrStreamingListUnsupported, 422},
		{"the same refusal of a plain watch", 422, rejected, false, nil, 422},
		{"no Status in the body", 503, []byte("upstream connect error"), false, listwatch.ErrUnavailable, 503},
	} {
		err := watchResponseError(resp(tc.code), tc.body, tc.streaming)
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want it to wrap %v", tc.name, err, tc.want)
		}
		if tc.want == nil && (errors.Is(err, listwatch.ErrStreamingListUnsupported) || errors.Is(err, listwatch.ErrExpired)) {
			t.Errorf("%s: %v wraps a listwatch error it should not", tc.name, err)
		}
		var se *apierrors.StatusError
		if !errors.As(err, &se) || se.ErrStatus.Code != tc.wantCode {
			t.Errorf("%s: %v: the server's status (code %d) is not reachable", tc.name, err, tc.wantCode)
		}
	}
	if MapError(nil) != nil {
		t.Error("MapError(nil) is not nil")
	}
}

package kube

import (
	"net/http"

	"github.com/kinformer/kinformer/kube/internal/source"
)

// ErrMalformed is wrapped by the error of a response that does not decode
// (a truncated or corrupt frame, an undecodable object, invalid JSON). On a
// watch it is final: every later Next returns the same error. An object that
// decodes but is of another kind than the source serves is reported as a
// *listwatch.DecodeError (errors.Is(err, listwatch.ErrWrongType)) instead,
// and only that event is skipped.
var ErrMalformed = source.ErrMalformed

// MapError maps the failure of a request to a kube-apiserver onto the
// listwatch errors, as this package's sources do: the result wraps the
// listwatch error the reflector acts on (ErrExpired, ErrUnavailable, ...)
// and err itself, so errors.As still finds the server's
// *apierrors.StatusError. An error that fits none comes back unchanged;
// nil stays nil. It is for sources written outside this package (the
// kinformer command's Table source is one) that should fail the same way.
func MapError(err error) error { return source.MapError(err) }

// WatchResponseError is the error of a watch request the server answered
// with a status other than 200 (body is what was read of the response):
// the server's Status when the body holds one (protobuf or JSON), else the
// HTTP status and the body's text, mapped as MapError maps it. With
// streaming set (the request asked for sendInitialEvents), a server that
// refuses the parameter gives an error wrapping
// listwatch.ErrStreamingListUnsupported, after which the reflector lists
// instead.
func WatchResponseError(resp *http.Response, body []byte, streaming bool) error {
	return source.WatchResponseError(resp, body, streaming)
}

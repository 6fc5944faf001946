package kube

import (
	"github.com/kinformer/kinformer/internal/listquery"
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
// nil stays nil.
//
// Deprecated: it was exported for the kinformer command only, which now
// reaches the same mapping inside the module; it goes away.
func MapError(err error) error { return listquery.MapError(err) }
